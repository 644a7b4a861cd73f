// Short-lived TURN credentials in coturn's REST-secret scheme
// (draft-uberti-behave-turn-rest-00, coturn `use-auth-secret`):
// username = "<expiry unix seconds>:<user>", credential = base64(HMAC-SHA1(secret, username)).
// The user part is the participant's public peer id, not its secret token:
// TURN servers log usernames.
import { createHmac } from 'node:crypto';
import type { IceServerInfo } from '../../shared/protocol.js';

export function turnCredentials(secret: string, user: string, ttlSeconds: number, now: Date): { username: string; credential: string } {
  const expiry = Math.floor(now.getTime() / 1000) + ttlSeconds;
  const username = `${expiry}:${user}`;
  const credential = createHmac('sha1', secret).update(username).digest('base64');
  return { username, credential };
}

type TurnConfig = { iceServers: IceServerInfo[]; turnSecret: string | null; turnUrls: string[]; turnTtlSeconds: number };

const hasTurn = (config: TurnConfig): config is TurnConfig & { turnSecret: string } => Boolean(config.turnSecret) && config.turnUrls.length > 0;

/** The ICE servers a participant gets: the configured ones, plus TURN with fresh credentials when a secret is set. */
export function iceServersFor(config: TurnConfig, user: string, now: Date): IceServerInfo[] {
  const servers = config.iceServers.map((s) => ({ ...s }));
  if (hasTurn(config)) {
    servers.push({ urls: [...config.turnUrls], ...turnCredentials(config.turnSecret, user, config.turnTtlSeconds, now) });
  }
  return servers;
}

/**
 * How often a participant in the call gets fresh credentials (ice-renewal.ts):
 * at half their life, so that the page always holds some valid for at least
 * that long. null without TURN: nothing it has expires.
 */
export function iceRenewalMs(config: TurnConfig): number | null {
  return hasTurn(config) ? (config.turnTtlSeconds * 1000) / 2 : null;
}

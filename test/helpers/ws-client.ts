// Shared by the join-side security tests (test/security/ws-*.test.ts): the
// documented shape of a signaling error (docs/signaling.md), a token
// arbitrary shaped like a real join or participant token, a call of two.
import fc from 'fast-check';
import type { ServerMessage } from '../../src/realtime/protocol.js';
import type { RealtimeServer } from '../realtime/helpers.js';

/** The error codes docs/signaling.md documents; anything else is a defect. */
export const DOCUMENTED_ERROR_CODES = [
  'bad-request',
  'too-large',
  'unknown-type',
  'not-joined',
  'already-joined',
  'not-found',
  'room-closed',
  'room-full',
  'chat-disabled',
  'screenshare-disabled',
  'invites-disabled',
  'forbidden',
  'rate-limited',
] as const;

/** Why a server message is not a well-formed error, or null when it is one. */
export function errorShapeProblem(message: ServerMessage): string | null {
  if (message.type !== 'error') return null;
  const keys = Object.keys(message).sort().join(',');
  if (keys !== 'code,message,type' && keys !== 'code,message,requestId,type') return `error with keys ${keys}`;
  if (!(DOCUMENTED_ERROR_CODES as readonly string[]).includes(message.code)) return `undocumented error code ${message.code}: ${message.message}`;
  if (typeof message.message !== 'string' || message.message === '') return 'error without a message';
  if ('requestId' in message && (typeof message.requestId !== 'string' || message.requestId === '')) return 'error with an empty requestId';
  return null;
}

/** A token with the shape of a real one (43 base64url characters, 256 bits): only luck would make it valid. */
export const tokenShaped = fc.stringMatching(/^[A-Za-z0-9_-]{43}$/);

/** A new room with its host and its guest in the call (the host has seen the guest arrive). */
export async function joinedPair(server: RealtimeServer, overrides: Record<string, unknown> = {}) {
  const room = await server.createRoom(overrides);
  const host = await server.connect();
  const guest = await server.connect();
  const h = await host.join(room.access_token, 'Host');
  const g = await guest.join(room.guest_token, 'Guest');
  await host.next('peer-joined');
  return { room, host, guest, h, g };
}

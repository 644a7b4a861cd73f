// Per-API-token request limits on /api (docs/security.md).
//
// In memory, per node, on purpose: the limit protects a node's CPU and its
// database from one runaway client, so it must cost nothing per request (no
// extra write, no lock on a hot row) and keep working while the database is
// down (a limiter that needs the database would turn an outage into 500s). The
// price: behind N nodes a token gets up to N times the limit; an operator who
// wants a cluster-wide figure sets RATE_LIMIT_PER_MINUTE to it divided by N.
//
// The algorithm is GCRA (a leaky bucket kept as one timestamp per token): a
// token may burst `limit` requests, and regains one every 60/limit seconds.
// Unlike fixed windows it never lets 2 x limit through around a window edge.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../domain/support/clock.js';

const WINDOW_MS = 60_000;

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the token has its whole burst again. */
  resetSeconds: number;
  /** Seconds until the next request is allowed (0 when this one was). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  take(key: string): RateDecision;
}

export function createRateLimiter({ limit, clock }: { limit: number; clock: Clock }): RateLimiter {
  const interval = WINDOW_MS / limit;
  // key -> theoretical arrival time (ms): when the bucket would be empty again.
  const tats = new Map<string, number>();
  let lastSweep = clock.now().getTime();

  /** Forgets tokens whose bucket is full again: memory stays bounded by the tokens active in the last minute. */
  function sweep(now: number) {
    if (now - lastSweep < WINDOW_MS) return;
    lastSweep = now;
    for (const [key, tat] of tats) if (tat <= now) tats.delete(key);
  }

  return {
    take(key) {
      const now = clock.now().getTime();
      sweep(now);
      const stored = tats.get(key);
      // A stored time beyond a full window ahead can only come from the wall
      // clock jumping back (NTP, a manual set): start that token afresh rather
      // than throttle it until the clock catches up.
      const tat = stored === undefined || stored > now + WINDOW_MS ? now : Math.max(stored, now);
      const next = tat + interval;
      const allowedFrom = next - WINDOW_MS;
      if (now < allowedFrom) {
        // Refused requests cost nothing, so a client that waits Retry-After gets through.
        return {
          allowed: false,
          limit,
          remaining: 0,
          resetSeconds: Math.ceil((tat - now) / 1000),
          retryAfterSeconds: Math.max(1, Math.ceil((allowedFrom - now) / 1000)),
        };
      }
      tats.set(key, next);
      return {
        allowed: true,
        limit,
        remaining: Math.floor((WINDOW_MS - (next - now)) / interval + 1e-9),
        resetSeconds: Math.ceil((next - now) / 1000),
        retryAfterSeconds: 0,
      };
    },
  };
}

/**
 * An onRequest hook for the authenticated /api routes (it runs after
 * authentication and keys on the API token's id, never the token itself).
 * Every answer carries RateLimit-Limit / -Remaining / -Reset
 * (draft-ietf-httpapi-ratelimit-headers); a refused one is 429 {error} with Retry-After.
 */
export function rateLimitHook(limiter: RateLimiter) {
  return async function rateLimit(request: FastifyRequest, reply: FastifyReply) {
    const decision = limiter.take(request.principal.tokenId);
    reply
      .header('RateLimit-Limit', String(decision.limit))
      .header('RateLimit-Remaining', String(decision.remaining))
      .header('RateLimit-Reset', String(decision.resetSeconds));
    if (!decision.allowed) {
      return reply
        .status(429)
        .header('Retry-After', String(decision.retryAfterSeconds))
        .send({ error: `Too many requests for this API token (limit ${decision.limit} per minute); retry after ${decision.retryAfterSeconds} s` });
    }
  };
}

// At most `limit` API requests are worked on at once; the others wait their
// turn in arrival order, before their body is parsed or their token looked up.
// Why: the API and the call's signaling share one event loop. Each turn of it
// runs the callbacks of every request ready then, and a signaling frame read
// in that turn waits for all of them. With 100 connections of an integrator's
// burst in flight on PostgreSQL, a turn took 12 ms and a relayed signal
// waited 25 ms (medians); bounded at the database pool's size, 10–11 ms, for
// 0–12 % fewer creates a second (docs/design.md#api-load-and-the-calls).
// While calls are connected, calls-first.ts lowers the limit further when the
// turns are still long, and raises it back as they shorten.
//
// A request that waits longer than `maxWaitMs` gets the answer a database that
// does not answer gives (503, Retry-After): the pool's own wait for a
// connection is bounded the same way, and a request queued here must not
// outlast one queued there.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { serviceUnavailable } from '../error-handler.js';

export interface ConcurrencyGate {
  /** The onRequest hook. */
  hook(request: FastifyRequest, reply: FastifyReply, done: () => void): void;
  limit(): number;
  /** A lower limit takes effect as requests finish; a higher one starts waiting requests at once. */
  setLimit(limit: number): void;
  /** Requests waiting for a slot. */
  waiting(): number;
}

/** Where a request's slot is kept, so that a long answer can give it back before it ends. */
const SLOT = Symbol('concurrency-gate slot');
type WithSlot = { [SLOT]?: () => void };

/**
 * The request's work is done but its answer takes long (a recording's file
 * streamed from disk): its slot goes back now rather than when the answer ends.
 */
export function leaveConcurrencyGate(reply: FastifyReply): void {
  const raw = reply.raw as unknown as WithSlot;
  const leave = raw[SLOT];
  delete raw[SLOT];
  leave?.();
}

/** Frees the slot once: when the answer ends, or earlier through leaveConcurrencyGate. */
function holdSlot(reply: FastifyReply, release: () => void): void {
  let held = true;
  const once = () => {
    if (!held) return;
    held = false;
    release();
  };
  (reply.raw as unknown as WithSlot)[SLOT] = once;
  reply.raw.once('close', once);
}

export function concurrencyGate(initialLimit: number, maxWaitMs = 5000): ConcurrencyGate {
  let limit = initialLimit;
  let active = 0;
  const waiting = new Set<() => void>();
  /** Slots free: the longest-waiting requests get them (a Set iterates in insertion order). */
  const startWaiting = () => {
    for (const next of waiting) {
      if (active >= limit) return;
      waiting.delete(next);
      active++;
      next();
    }
  };
  const release = () => {
    active--;
    startWaiting();
  };
  return {
    hook(request, reply, done) {
      // 'close' fires once per response: after it is sent, or when the client went
      // away. One that leaves while still waiting gives up its place, not a slot.
      if (active < limit && waiting.size === 0) {
        active++;
        holdSlot(reply, release);
        return done();
      }
      const start = () => {
        clearTimeout(timer);
        reply.raw.off('close', leave);
        holdSlot(reply, release);
        done();
      };
      const leave = () => {
        clearTimeout(timer);
        waiting.delete(start);
      };
      const timer = setTimeout(() => {
        leave();
        request.log.warn({ waitedMs: maxWaitMs, limit }, 'API request not started in time: the node is saturated');
        void serviceUnavailable(reply);
      }, maxWaitMs);
      waiting.add(start);
      reply.raw.once('close', leave);
    },
    limit: () => limit,
    setLimit(next) {
      limit = next;
      startWaiting();
    },
    waiting: () => waiting.size,
  };
}

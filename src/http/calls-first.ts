// Calls first. While anyone is connected to this node's signaling, the API's
// concurrency limit (hooks/concurrency-gate.ts) follows the length of the
// event loop's turns: a relayed offer, candidate or "let in" waits for the
// turn it arrives in, and a turn is long when it runs many API requests'
// callbacks or their garbage. So when the turns run long, fewer API requests
// are worked on at once (the others wait in the gate, in order), and as they
// shorten the limit climbs back to API_CONCURRENCY: an integrator's burst
// takes a little longer, a doctor's join does not wait behind it. With nobody
// connected there is nothing to protect and the API has the whole limit.
// With the calls in a process of their own, the bound follows that process's
// lateness, which it reports every window (docs/design.md, "Calls first";
// the figures behind each constant: bench/README.md, "Calls first").
import { performance } from 'node:perf_hooks';
import { eventLoopTurns, WINDOW_MS, type TurnSampler } from '../observability/event-loop-turns.js';
import type { ConcurrencyGate } from './hooks/concurrency-gate.js';

/**
 * The turn length, at the 99th percentile of a window, above which the limit
 * comes down. The 99th: the turns a signal waits longest for are rare (a
 * scavenge and the turn after it), and at the 90th they do not show.
 */
export const TARGET_TURN_MS = 4;
/**
 * The event loop's utilization from which its own callbacks and garbage are
 * what makes the turns long. Not only a saturated loop: on PostgreSQL, the
 * database on another core, the loop was busy 72–78 % of the time while the
 * API's scavenges made the relay's tail. Below half, long turns come from
 * elsewhere.
 */
export const BUSY = 0.5;
/** The API is never held below this many requests at once (or API_CONCURRENCY, if lower). */
export const FLOOR = 4;

/**
 * The turns of the calls process (src/calls-process/), which reports
 * its own 1 ms timer's lateness at p99 every window: how long a relayed
 * signal waited there, for its turn or for a core. The busy share is this
 * loop's: the API's work is what the bound can take off the cores.
 */
export function callsProcessTurns(calls: { lateness(): number }): TurnSampler {
  let since = performance.eventLoopUtilization();
  return {
    start() {
      since = performance.eventLoopUtilization();
    },
    stop() {},
    read() {
      const now = performance.eventLoopUtilization();
      const busy = performance.eventLoopUtilization(now, since).utilization;
      since = now;
      return { p99Ms: calls.lateness(), busy };
    },
  };
}

export interface CallsFirstOptions {
  gate: ConcurrencyGate;
  /** API_CONCURRENCY: the limit with nobody connected, and the most it climbs back to. */
  max: number;
  callsConnected(): boolean;
  turns?: TurnSampler;
}

/** Adjusts the gate's limit once a window (`adjust`); `start` runs it on a timer. */
export function callsFirst({ gate, max, callsConnected, turns = eventLoopTurns() }: CallsFirstOptions) {
  const floor = Math.min(max, FLOOR);
  let sampling = false;
  const adjust = () => {
    if (!callsConnected()) {
      if (sampling) turns.stop();
      sampling = false;
      gate.setLimit(max);
    } else if (!sampling) {
      // The first window starts now; nothing measured yet.
      turns.start();
      sampling = true;
    } else {
      const { p99Ms, busy } = turns.read();
      const limit = gate.limit();
      // Long turns on a loop busy at least half the window: its own callbacks
      // and their garbage make them long, and fewer API requests at once
      // shorten them. Long turns on a loop mostly idle come from elsewhere
      // (the cores taken by other work, PGlite's thread), which holding the
      // API back would not help.
      // Down fast (a quarter a window), up slowly (one a window): signaling that
      // waits is felt at once, a burst a little slower is not noticed.
      if (p99Ms > TARGET_TURN_MS && busy >= BUSY) gate.setLimit(Math.max(floor, Math.floor(limit * 0.75)));
      else if ((p99Ms < TARGET_TURN_MS / 2 || busy < BUSY) && limit < max) gate.setLimit(limit + 1);
    }
  };
  let timer: NodeJS.Timeout | null = null;
  return {
    adjust,
    start() {
      timer ??= setInterval(adjust, WINDOW_MS).unref();
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = null;
      turns.stop();
      sampling = false;
    },
  };
}

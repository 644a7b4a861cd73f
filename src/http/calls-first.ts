// Calls first. While anyone is connected to this node's signaling, the API's
// concurrency limit (hooks/concurrency-gate.ts) follows the length of the
// event loop's turns: a relayed offer, candidate or "let in" waits for the
// turn it arrives in, and a turn is long when it runs many API requests'
// callbacks, or when it is the scavenge of their garbage and the turn after
// it, which works off what queued meanwhile. So when the turns run long,
// fewer API requests are worked on at once (the others wait in the gate, in
// order), and as they shorten the limit climbs back to API_CONCURRENCY. An
// integrator's burst then takes a little longer; a doctor's join, offers and
// chat do not wait behind it (the media goes between the browsers, not
// through here). With nobody connected there is nothing to protect and the
// API has the whole limit.
//
// Measured on PostgreSQL, 100 connections creating rooms beside 1,000
// connected participants (bench/README.md, "Calls first" and "the relay
// measured apart from the second core"): first, with the limit following the
// turns at p90, a relayed signal waited 3 ms at the median instead of 11, 18
// ms at p99 instead of 42. Then, the server on a core of its own: the turns
// were short at p90 (1.2–1.6 ms) and the limit never moved, while the relay's
// p99 was 7–10 ms: scavenges, 2–3 ms each, 7–10 % of the time. Following the
// turns at p99, the limit settles at 4: the relay's p99 7.6 → 5.6 ms and
// /healthz's 20 → 5.6 ms for 3 % fewer creates; with the server, PostgreSQL
// and the load sharing both cores, 7.7 → 4.3 ms and 5.4 → 2.2 ms for 22 %
// fewer (only while calls are connected, and only under a burst that keeps
// the loop busy).
//
// With the calls in a process of their own (realtime/calls-process/, the
// default), the API's turns no longer hold up a signal, but its work still
// takes the cores that process needs. So there the bound follows that
// process: its event loop's lateness at p99 (how long a signal waited for its
// turn or for a core), which it reports every window while anyone is
// connected to it, on this loop busy at least half the window.
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';
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
/** How often the limit is adjusted (one window of turns). */
export const WINDOW_MS = 250;
/** The API is never held below this many requests at once (or API_CONCURRENCY, if lower). */
export const FLOOR = 4;

/** The event loop over one window. */
export interface Turns {
  /** The 99th percentile of the turns' length, in milliseconds. */
  p99Ms: number;
  /** The share of the window the loop spent running callbacks (event-loop utilization, 0..1). */
  busy: number;
}

/** How long the event loop's turns were since the last read. */
export interface TurnSampler {
  start(): void;
  stop(): void;
  /** The turns since the last read (or the start), then forgets them. */
  read(): Turns;
}

/**
 * Node's event-loop delay histogram at a 1 ms resolution: the interval between
 * a 1 ms timer's runs, so about one sample per turn, as long as that turn; and
 * its utilization. On only while someone is connected: an idle node should not
 * wake a thousand times a second.
 */
export function eventLoopTurns(): TurnSampler {
  let histogram: IntervalHistogram | null = null;
  let since = performance.eventLoopUtilization();
  return {
    start() {
      if (histogram) return;
      histogram = monitorEventLoopDelay({ resolution: 1 });
      histogram.enable();
      since = performance.eventLoopUtilization();
    },
    stop() {
      histogram?.disable();
      histogram = null;
    },
    read() {
      if (!histogram || histogram.count === 0) return { p99Ms: 0, busy: 0 };
      const now = performance.eventLoopUtilization();
      const turns = { p99Ms: histogram.percentile(99) / 1e6, busy: performance.eventLoopUtilization(now, since).utilization };
      since = now;
      histogram.reset();
      return turns;
    },
  };
}

/**
 * The turns of the calls process (realtime/calls-process/), which reports
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

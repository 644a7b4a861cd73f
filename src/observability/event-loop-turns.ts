// The event loop's turns over a window: how long a callback that arrived
// waited for its turn. The main process's calls first (http/calls-first.ts)
// follows it, and the calls process reports it to the main process.
import { monitorEventLoopDelay, performance, type IntervalHistogram } from 'node:perf_hooks';

/** One window of turns: how often they are read (and the API's limit adjusted). */
export const WINDOW_MS = 250;

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


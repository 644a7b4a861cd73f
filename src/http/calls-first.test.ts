// The limit's adjustment (calls-first.ts) against turn lengths given window by
// window, and the turn sampler against a loop really held.
import { describe, expect, it } from 'vitest';
import { eventLoopTurns, type TurnSampler } from '../observability/event-loop-turns.js';
import { BUSY, callsFirst, callsProcessTurns, FLOOR, TARGET_TURN_MS } from './calls-first.js';
import { concurrencyGate } from './hooks/concurrency-gate.js';

/** A sampler that reports the turn lengths the test sets, and whether it runs. */
function scriptedTurns(): TurnSampler & { turn: number; busy: number; running: boolean } {
  return {
    turn: 0,
    busy: 1,
    running: false,
    start() {
      this.running = true;
    },
    stop() {
      this.running = false;
    },
    read() {
      if (!this.running) throw new Error('read while not sampling');
      return { p99Ms: this.turn, busy: this.busy };
    },
  };
}

function setup(max = 20) {
  const gate = concurrencyGate(max);
  const turns = scriptedTurns();
  let connected = false;
  const limiter = callsFirst({ gate, max, turns, callsConnected: () => connected });
  /** Windows with this turn length (and loop utilization); returns the limit after each. */
  const windows = (count: number, turn: number, busy = 1) => {
    turns.turn = turn;
    turns.busy = busy;
    return Array.from({ length: count }, () => {
      limiter.adjust();
      return gate.limit();
    });
  };
  return { gate, turns, limiter, windows, connect: (on: boolean) => (connected = on) };
}

describe('calls first: the API limit while calls are connected', () => {
  it('keeps API_CONCURRENCY and samples nothing while nobody is connected, however long the turns', () => {
    const { windows, turns } = setup();
    expect(windows(5, 50)).toEqual([20, 20, 20, 20, 20]);
    expect(turns.running).toBe(false);
  });

  it('comes down by a quarter a window while the turns are long, to the floor and no further', () => {
    const { windows, connect, turns } = setup();
    connect(true);
    // The first window only starts the sampling.
    expect(windows(1, 50)).toEqual([20]);
    expect(turns.running).toBe(true);
    expect(windows(7, TARGET_TURN_MS + 1)).toEqual([15, 11, 8, 6, 4, 4, 4]);
    expect(FLOOR).toBe(4);
  });

  it('climbs back one a window while the turns are short, holds between, and is whole again once nobody is connected', () => {
    const { windows, connect, turns } = setup();
    connect(true);
    windows(1, 0);
    windows(3, 20); // 20 → 15 → 11 → 8
    expect(windows(3, TARGET_TURN_MS / 2 - 0.5)).toEqual([9, 10, 11]);
    expect(windows(3, TARGET_TURN_MS * 0.8)).toEqual([11, 11, 11]);
    windows(2, 20); // 11 → 8 → 6
    connect(false);
    expect(windows(1, 20)).toEqual([20]);
    expect(turns.running).toBe(false);
    // Short turns never take it above API_CONCURRENCY.
    connect(true);
    expect(windows(4, 0)).toEqual([20, 20, 20, 20]);
  });

  it('holds nothing back when the loop is mostly idle: long turns then come from elsewhere (other work on the cores, PGlite)', () => {
    const { windows, connect } = setup();
    connect(true);
    windows(1, 0);
    expect(windows(2, 20, BUSY - 0.05)).toEqual([20, 20]);
    expect(windows(2, 20, BUSY)).toEqual([15, 11]);
    // Not only a saturated loop: on PostgreSQL, the database on another core, a
    // loop busy 72–78 % of the time had the API's scavenges making the tail.
    expect(windows(1, 20, 0.75)).toEqual([8]);
    expect(windows(2, 20, 0.4)).toEqual([9, 10]);
  });

  it('never goes below an API_CONCURRENCY lower than the floor', () => {
    const { windows, connect } = setup(2);
    connect(true);
    expect(windows(4, 50)).toEqual([2, 2, 2, 2]);
  });
});

describe('eventLoopTurns', () => {
  it('reads long turns when the loop is held, and nothing once stopped', async () => {
    const turns = eventLoopTurns();
    turns.start();
    // 300 ms of turns each held 15 ms.
    const until = Date.now() + 300;
    while (Date.now() < until) {
      const held = Date.now() + 15;
      while (Date.now() < held);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const held = turns.read();
    expect(held.p99Ms).toBeGreaterThan(TARGET_TURN_MS * 2);
    expect(held.busy).toBeGreaterThan(BUSY);
    // Idle: the loop waits, and the turns are the timer's own millisecond.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(turns.read().busy).toBeLessThan(BUSY);
    turns.stop();
    expect(turns.read()).toEqual({ p99Ms: 0, busy: 0 });
  });

  it('sees the rare long turn (a scavenge and the turn after it), which a 90th percentile misses', async () => {
    const turns = eventLoopTurns();
    turns.start();
    // 600 ms of short turns (the 1 ms timer's own), one in 40 held 15 ms.
    const until = Date.now() + 600;
    for (let turn = 0; Date.now() < until; turn++) {
      if (turn % 40 === 39) {
        const held = Date.now() + 15;
        while (Date.now() < held);
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const read = turns.read();
    turns.stop();
    expect(read.p99Ms).toBeGreaterThan(TARGET_TURN_MS * 2);
  });
});

describe('callsProcessTurns', () => {
  it("reads the calls process's lateness and this loop's busy share, so that the API's bound follows calls in another process", async () => {
    let lateness = 9;
    const turns = callsProcessTurns({ lateness: () => lateness });
    const gate = concurrencyGate(20);
    const limiter = callsFirst({ gate, max: 20, callsConnected: () => true, turns });
    limiter.adjust();
    // This loop held 200 ms (the API at work) while the calls process ran late.
    const until = Date.now() + 200;
    while (Date.now() < until);
    limiter.adjust();
    expect(gate.limit()).toBe(15);
    // The calls process on time again, this loop idle: the bound climbs back.
    lateness = 0.5;
    await new Promise((resolve) => setTimeout(resolve, 100));
    limiter.adjust();
    expect(gate.limit()).toBe(16);
    // Late again, but this loop idle: the lateness comes from elsewhere, and the API keeps its bound.
    lateness = 9;
    await new Promise((resolve) => setTimeout(resolve, 100));
    limiter.adjust();
    expect(gate.limit()).toBe(17);
  });
});

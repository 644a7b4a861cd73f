// The realtime benchmarks are not part of `npm test`; this keeps their parts
// from rotting: the baseline relay (a real process), the client process, the
// inspector memory readings and a join measurement against Parley (in process
// here, on the test database), all at a tiny size.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureJoins, measureMemory, measureRelay } from '../../bench/support/realtime-bench.js';
import { startBaselineTarget, startClients, type Clients, type RealtimeTarget } from '../../bench/support/realtime-driver.js';
import { ORIGIN, startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';

let clients: Clients;
let baseline: RealtimeTarget;
let parley: RealtimeServer;

beforeAll(async () => {
  [clients, baseline, parley] = await Promise.all([startClients(), startBaselineTarget(2), startRealtimeServer()]);
});

afterAll(async () => {
  clients?.stop();
  await baseline?.stop();
  await parley?.close();
});

describe('realtime benchmark parts', () => {
  it('measure memory and relay latency on the baseline relay', async () => {
    const steps = await measureMemory(clients, baseline, [2, 4], 2);
    expect(steps.map((s) => s.participants)).toEqual([0, 2, 4]);
    for (const step of steps) expect(step.memory.rss).toBeGreaterThan(step.memory.heapUsed);
    const relay = await measureRelay(clients, baseline, { messages: 20, perSocketRate: 5, seconds: 1 });
    expect(relay.sequential.received).toBe(20);
    expect(relay.loaded.received).toBeGreaterThan(0);
    expect(relay.loaded.received).toBe(relay.loaded.sent);
    await clients.closeAll();
  });

  it('measures joins through Parley', async () => {
    const rooms = await Promise.all([parley.createRoom(), parley.createRoom()]);
    const tokenOf = (url: string) => new URL(url).pathname.split('/').pop()!;
    const target: RealtimeTarget = {
      name: 'parley-pglite',
      wsUrl: parley.wsUrl,
      origin: ORIGIN,
      participants: rooms.flatMap((room, i) => [
        { joinToken: tokenOf(room.host_join_url), room: i },
        { joinToken: tokenOf(room.guest_join_url), room: i },
      ]),
      inspector: {
        evaluate: () => Promise.reject(new Error('in process: no inspector')),
        collectGarbage: () => Promise.reject(new Error('in process: no inspector')),
        close: () => {},
      },
      pid: process.pid,
      stop: async () => {},
    };
    const result = await measureJoins(clients, target, 4, 2);
    expect(result.joined).toBe(4);
    expect(result.perSecond).toBeGreaterThan(0);
    expect(result.p99).toBeGreaterThanOrEqual(result.p50);
  });
});

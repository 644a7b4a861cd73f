// The three realtime measurements (bench/README.md), each on one target (Parley
// or the baseline relay) through the client process. Shared by
// bench/realtime-signaling.bench.ts and its smoke test.
import type { Clients, JoinResult, Memory, RealtimeTarget, RelayResult } from './realtime-driver.js';
import { cpuTicks, sampleMemory, waitIdle } from './realtime-driver.js';

/** Microseconds of the server's CPU per item while `work` runs (10 ms ticks: meaningful over a few hundred items). */
async function withCpu<T extends { serverCpuMicros?: number }>(pid: number, items: (result: T) => number, work: () => Promise<T>): Promise<T> {
  const before = cpuTicks(pid);
  const result = await work();
  result.serverCpuMicros = ((cpuTicks(pid) - before) * 10_000) / Math.max(1, items(result));
  return result;
}

/**
 * Joins per second: the first `joins` participants of the target (two per
 * room) connect, join and get their `joined` reply, `concurrency` at a time.
 * Then they disconnect and the server is left to record the leaves.
 */
export async function measureJoins(clients: Clients, target: RealtimeTarget, joins: number, concurrency: number): Promise<JoinResult> {
  if (joins > target.participants.length) throw new Error(`${target.name} has room for ${target.participants.length} participants, not ${joins}`);
  await waitIdle(target.pid);
  const result = await withCpu(target.pid, (r) => r.joined, () => clients.join(target, target.participants.slice(0, joins), concurrency));
  await clients.closeAll();
  await waitIdle(target.pid);
  if (result.errors > 0) throw new Error(`${target.name}: ${result.errors} of ${joins} joins failed (${result.firstError})`);
  return result;
}

export interface MemoryStep {
  participants: number;
  memory: Memory;
}

/**
 * Server memory with 0 and then each of `levels` idle joined participants
 * (cumulative, whole rooms at a time), each reading after the server settled
 * and two full collections. The participants stay connected afterwards.
 */
export async function measureMemory(clients: Clients, target: RealtimeTarget, levels: number[], concurrency = 50): Promise<MemoryStep[]> {
  await waitIdle(target.pid);
  const steps: MemoryStep[] = [{ participants: 0, memory: await sampleMemory(target.inspector) }];
  let connected = 0;
  for (const level of levels) {
    const result = await clients.join(target, target.participants.slice(connected, level), concurrency);
    if (result.errors > 0) throw new Error(`${target.name}: ${result.errors} joins failed (${result.firstError})`);
    connected = level;
    await waitIdle(target.pid);
    steps.push({ participants: level, memory: await sampleMemory(target.inspector) });
  }
  return steps;
}

/** Bytes per participant: the least-squares slope through the readings. */
export function slope(steps: MemoryStep[], of: keyof Memory): number {
  const xs = steps.map((s) => s.participants);
  const ys = steps.map((s) => s.memory[of]);
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  xs.forEach((x, i) => {
    num += (x - mx) * (ys[i]! - my);
    den += (x - mx) ** 2;
  });
  return num / den;
}

/**
 * Relay latency among the participants connected now: one message at a time
 * (`messages` of them, pair after pair), then every participant sending
 * `perSocketRate` messages/s to its partner for `seconds`.
 */
export async function measureRelay(
  clients: Clients,
  target: RealtimeTarget,
  options: { messages: number; perSocketRate: number; seconds: number },
): Promise<{ sequential: RelayResult; loaded: RelayResult }> {
  await waitIdle(target.pid);
  const sequential = await clients.relaySequential(target, options.messages);
  await waitIdle(target.pid);
  const loaded = await withCpu(target.pid, (r) => r.received, () => clients.relayLoaded(target, options.perSocketRate, options.seconds));
  for (const [mode, result] of [['one at a time', sequential], ['loaded', loaded]] as const) {
    if (result.lost > 0 || result.rateLimited > 0) {
      throw new Error(`${target.name} relay (${mode}): ${result.lost} of ${result.sent} messages lost, ${result.rateLimited} rate-limited`);
    }
  }
  return { sequential, loaded };
}

// The parent side of the realtime benchmarks: the client process
// (realtime-clients.ts), the servers under test as real processes, and what
// is read from them: memory through the inspector (after a full GC), CPU from
// /proc to know when a server has settled.
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import WebSocket from 'ws';
import { SERVER_NODE_FLAGS } from '../../src/node-flags.js';
import { ADMIN_TOKEN, freePort, root, startProcess, type ServerProcess } from './processes.js';

export interface Participant {
  joinToken: string;
  /** Participants with the same room number share a room (and a relay pair). */
  room: number;
}

export type ClientCommand =
  | { op: 'join'; url: string; origin: string; participants: Participant[]; concurrency: number; timeoutMs: number }
  | { op: 'relay-sequential'; url: string; messages: number; timeoutMs: number }
  | { op: 'relay-loaded'; url: string; perSocketRate: number; seconds: number }
  | { op: 'close'; timeoutMs: number };

export type ClientReply = { ok: true; result: unknown } | { ok: false; error: string };

export interface JoinResult {
  joined: number;
  /** CPU the server used per join, microseconds (set by measureJoins). */
  serverCpuMicros?: number;
  errors: number;
  firstError?: string;
  seconds: number;
  perSecond: number;
  /** Connect + join + joined reply, milliseconds. */
  p50: number;
  p99: number;
}

export interface RelayResult {
  sent: number;
  received: number;
  lost: number;
  rateLimited: number;
  seconds: number;
  /** Send to receipt at the other participant, milliseconds. */
  p50: number;
  p99: number;
  max: number;
  /** CPU the server used per message, microseconds (set by measureRelay). */
  serverCpuMicros?: number;
}

export interface Clients {
  join(target: RealtimeTarget, participants: Participant[], concurrency: number): Promise<JoinResult>;
  /** Between the pairs joined to `target` only. */
  relaySequential(target: RealtimeTarget, messages: number): Promise<RelayResult>;
  relayLoaded(target: RealtimeTarget, perSocketRate: number, seconds: number): Promise<RelayResult>;
  closeAll(): Promise<void>;
  stop(): void;
  /** The client process (for pinning it to a core). */
  pid: number;
}

/** Forks the client process; every command has a deadline after which the process is killed. */
export async function startClients(): Promise<Clients> {
  const child: ChildProcess = fork(path.join(root, 'bench/support/realtime-clients.ts'), [], {
    cwd: root,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.on('exit', killOnExit);
  let settle: ((reply: ClientReply) => void) | null = null;
  child.on('message', (reply: ClientReply) => settle?.(reply));
  child.once('exit', (code) => settle?.({ ok: false, error: `the client process exited (${code})` }));

  /** One command (or none: the first "ready"), one reply. */
  const call = <T>(command: ClientCommand | null, timeoutMs: number) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the client process did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      settle = (reply) => {
        clearTimeout(timer);
        settle = null;
        if (reply.ok) resolve(reply.result as T);
        else reject(new Error(`clients: ${reply.error}`));
      };
      if (command) child.send(command);
    });
  await call(null, 30_000);

  return {
    join: (target, participants, concurrency) =>
      call<JoinResult>({ op: 'join', url: target.wsUrl, origin: target.origin, participants, concurrency, timeoutMs: 20_000 }, 120_000 + participants.length * 50),
    relaySequential: (target, messages) =>
      call<RelayResult>({ op: 'relay-sequential', url: target.wsUrl, messages, timeoutMs: 5000 }, 60_000 + messages * 100),
    relayLoaded: (target, perSocketRate, seconds) =>
      call<RelayResult>({ op: 'relay-loaded', url: target.wsUrl, perSocketRate, seconds }, (seconds + 40) * 1000),
    closeAll: async () => {
      await call({ op: 'close', timeoutMs: 10_000 }, 30_000);
    },
    stop: () => {
      child.kill('SIGKILL');
      process.off('exit', killOnExit);
    },
    pid: child.pid!,
  };
}

// ---- servers ----

export type TargetName = 'baseline' | 'parley-pg' | 'parley-pglite' | 'parley-before' | `${string} ${string}=${string}`;

export interface RealtimeTarget {
  name: TargetName;
  wsUrl: string;
  origin: string;
  /** `rooms` rooms, two participants each (a call holds at most 8: the load spreads over many rooms). */
  participants: Participant[];
  /** Parley's first tenant's API token (not on the baseline). */
  apiToken?: string;
  inspector: Inspector;
  pid: number;
  stop(): Promise<void>;
}

/** The Chrome DevTools protocol of a server started with --inspect=127.0.0.1:0. */
export interface Inspector {
  evaluate<T>(expression: string): Promise<T>;
  collectGarbage(): Promise<void>;
  close(): void;
}

export async function connectInspector(output: () => string): Promise<Inspector> {
  let url: string | undefined;
  for (let i = 0; i < 100 && !url; i++) {
    url = /Debugger listening on (ws:\/\/127\.0\.0\.1:\d+\/[\w-]+)/.exec(output())?.[1];
    if (!url) await sleep(50);
  }
  if (!url) throw new Error('the server printed no inspector address');
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let id = 0;
  const waiting = new Map<number, (message: { result?: any; error?: { message: string } }) => void>();
  socket.on('message', (raw) => {
    const message = JSON.parse(String(raw)) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id !== undefined) waiting.get(message.id)?.(message);
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<any>((resolve, reject) => {
      const n = ++id;
      const timer = setTimeout(() => reject(new Error(`inspector: no answer to ${method}`)), 30_000);
      waiting.set(n, (message) => {
        clearTimeout(timer);
        waiting.delete(n);
        if (message.error) reject(new Error(`inspector: ${message.error.message}`));
        else resolve(message.result);
      });
      socket.send(JSON.stringify({ id: n, method, params }));
    });
  return {
    async evaluate<T>(expression: string) {
      const result = await call('Runtime.evaluate', { expression, returnByValue: true });
      if (result.exceptionDetails) throw new Error(`inspector: ${expression} threw`);
      return result.result.value as T;
    },
    async collectGarbage() {
      await call('HeapProfiler.collectGarbage');
    },
    close: () => socket.close(),
  };
}

export interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}

/** Memory of the server after two full collections (what stays, not what is waiting to be collected). */
export async function sampleMemory(inspector: Inspector): Promise<Memory> {
  await inspector.collectGarbage();
  await inspector.collectGarbage();
  const usage = await inspector.evaluate<string>('JSON.stringify(process.memoryUsage())');
  const { rss, heapUsed, external } = JSON.parse(usage) as Memory;
  return { rss, heapUsed, external };
}

/** CPU time the process has used so far (user + system), in clock ticks (10 ms). */
/** Process `pid` and every process it started, and they started (a Parley server and its calls process). */
export function processTree(pid: number): number[] {
  const children = fs.readdirSync(`/proc/${pid}/task`).flatMap((thread) =>
    fs.readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
  );
  return [pid, ...children.flatMap(processTree)];
}

/** CPU ticks used so far by process `pid` and those it started. */
export function cpuTicks(pid: number): number {
  // /proc/<pid>/stat: fields 14 and 15 (utime, stime) after the parenthesised command name.
  const ticks = (one: number) => {
    const fields = fs.readFileSync(`/proc/${one}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return Number(fields[11]) + Number(fields[12]);
  };
  return processTree(pid).reduce((sum, one) => sum + ticks(one), 0);
}

/**
 * Waits until the server process is quiet (at most `maxTicks` CPU ticks, i.e.
 * 10 ms each, in a `windowMs` window): leaves and other work after a burst are done.
 */
export async function waitIdle(pid: number, { windowMs = 500, maxTicks = 3, timeoutMs = 60_000 } = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = cpuTicks(pid);
  while (Date.now() < deadline) {
    await sleep(windowMs);
    const now = cpuTicks(pid);
    if (now - last <= maxTicks) return;
    last = now;
  }
  throw new Error(`server ${pid} did not settle within ${timeoutMs} ms`);
}

const ROOM_BODY = JSON.stringify({ name: 'Consultation', meeting_duration: 30, scheduled_at: '2030-03-10T14:00:00Z' });

/** `count` rooms through the API, ten at a time: the host and the guest join token of each. */
async function createRooms(server: ServerProcess, token: string, count: number): Promise<Participant[]> {
  const participants: Participant[] = [];
  for (let i = 0; i < count; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, count - i) }, async (_, j) => {
        const response = await fetch(server.url + '/api/rooms', {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: ROOM_BODY,
        });
        if (response.status !== 201) throw new Error(`creating a room: ${response.status} ${await response.text()}`);
        const room = (await response.json()) as { host_join_url: string; guest_join_url: string };
        const tokenOf = (url: string) => new URL(url).pathname.split('/').pop()!;
        return [
          { joinToken: tokenOf(room.host_join_url), room: i + j },
          { joinToken: tokenOf(room.guest_join_url), room: i + j },
        ];
      }),
    );
    participants.push(...batch.flat());
  }
  return participants;
}

async function finish(name: TargetName, server: ServerProcess, participants: Participant[], apiToken?: string): Promise<RealtimeTarget> {
  const inspector = await connectInspector(server.output);
  const pid = await inspector.evaluate<number>('process.pid');
  const origin = server.url;
  return {
    name,
    wsUrl: `${server.url.replace(/^http/, 'ws')}/ws`,
    origin,
    participants,
    ...(apiToken ? { apiToken } : {}),
    inspector,
    pid,
    stop: async () => {
      inspector.close();
      await server.stop();
    },
  };
}

/**
 * Parley as an operator runs it (as `npm start` does: `node dist/src/main.js`
 * with src/node-flags.ts's flags, npm run build first), with the inspector on
 * 127.0.0.1 for memory readings; `rooms` rooms created through its API.
 * `entry` may name another build (before/after figures).
 */
export async function startParleyTarget(
  name: TargetName,
  env: Record<string, string>,
  rooms: number,
  entry = path.join(root, 'dist/src/main.js'),
): Promise<RealtimeTarget> {
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  const port = await freePort();
  const server = await startProcess({
    name: 'parley-realtime',
    args: ['--inspect=127.0.0.1:0', entry],
    // In NODE_OPTIONS, so that a benchmark's variant can set its own (--env-variants).
    env: { NODE_OPTIONS: SERVER_NODE_FLAGS.join(' '), PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}`, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE: '0', ...env },
    port,
    readyPath: '/readyz',
  });
  try {
    const token = /prl_[A-Za-z0-9_-]{43}/.exec(server.output())?.[0];
    if (!token) throw new Error('Parley printed no Instance API token: the database was not empty');
    return await finish(name, server, await createRooms(server, token, rooms), token);
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** The minimal ws relay (realtime-baseline.ts) as its own process; its rooms are just names. */
export async function startBaselineTarget(rooms: number): Promise<RealtimeTarget> {
  const port = await freePort();
  const server = await startProcess({
    name: 'realtime-baseline',
    args: ['--inspect=127.0.0.1:0', '--import', 'tsx', path.join(root, 'bench/support/realtime-baseline.ts')],
    env: { PORT: String(port) },
    port,
    readyPath: '/healthz',
  });
  const participants = Array.from({ length: rooms }, (_, room) => [
    { joinToken: `room-${room}`, room },
    { joinToken: `room-${room}`, room },
  ]).flat();
  return finish('baseline', server, participants);
}

// The realtime load: real `ws` clients in a process of their own (forked by
// realtime-driver.ts), so that they never share an event loop with a server
// under test. The parent sends one command at a time over IPC and gets one
// reply. Bounded: only ws://127.0.0.1, at most MAX_SOCKETS sockets, every
// command has a deadline, and the process exits when its parent goes or after
// LIFETIME_MS, whichever comes first.
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import type { ClientCommand, ClientReply, JoinResult, Participant, RelayResult } from './realtime-driver.js';
import { inLanes } from './lanes.js';
import { percentile } from './stats.js';

const MAX_SOCKETS = 6000;
const LIFETIME_MS = 30 * 60_000;
/** The hub allows ~50 frames/s per connection (docs/signaling.md): the load stays well under it. */
const MAX_RATE_PER_SOCKET = 20;

interface Held {
  socket: WebSocket;
  /** The server it joined: a relay measures one server's pairs only, whatever else is held. */
  url: string;
  room: number;
  peerId: string;
}

const held: Held[] = [];
/** Sent and not yet received relay messages: sequence number -> send time. */
const inFlight = new Map<number, number>();
let latencies: number[] = [];
let rateLimited = 0;
let onReceived: ((seq: number) => void) | null = null;

setTimeout(() => process.exit(3), LIFETIME_MS).unref();
process.on('disconnect', () => process.exit(0));

function watch(h: Held) {
  h.socket.on('message', (raw) => {
    const message = JSON.parse(String(raw)) as { type: string; code?: string; data?: { candidate?: { bench?: number } } };
    if (message.type === 'signal') {
      const seq = message.data?.candidate?.bench;
      const sentAt = seq === undefined ? undefined : inFlight.get(seq);
      if (seq === undefined || sentAt === undefined) return;
      latencies.push(performance.now() - sentAt);
      inFlight.delete(seq);
      onReceived?.(seq);
    } else if (message.type === 'error' && message.code === 'rate-limited') {
      rateLimited++;
    }
  });
}

function joinOne(url: string, origin: string, participant: Participant, timeoutMs: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { origin, perMessageDeflate: false });
    const timer = setTimeout(() => {
      socket.terminate();
      reject(new Error(`no joined reply within ${timeoutMs} ms`));
    }, timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.terminate();
      reject(error);
    };
    socket.once('open', () => socket.send(JSON.stringify({ type: 'join', requestId: 'j', joinToken: participant.joinToken, displayName: 'Bench' })));
    const onMessage = (raw: WebSocket.RawData) => {
      const message = JSON.parse(String(raw)) as { type: string; requestId?: string; code?: string; self?: { id: string } };
      if (message.requestId !== 'j') return;
      clearTimeout(timer);
      socket.off('message', onMessage);
      if (message.type !== 'joined' || !message.self) return fail(new Error(`join refused: ${message.code ?? message.type}`));
      const h = { socket, url, room: participant.room, peerId: message.self.id };
      held.push(h);
      watch(h);
      resolve(performance.now() - started);
    };
    socket.on('message', onMessage);
    socket.once('error', fail);
    socket.once('unexpected-response', (_request, response) => fail(new Error(`HTTP ${response.statusCode}`)));
  });
}

async function join(command: Extract<ClientCommand, { op: 'join' }>): Promise<JoinResult> {
  if (!/^ws:\/\/127\.0\.0\.1:\d+\/ws$/.test(command.url)) throw new Error(`clients only ever connect to ws://127.0.0.1, not ${command.url}`);
  if (held.length + command.participants.length > MAX_SOCKETS) throw new Error(`at most ${MAX_SOCKETS} sockets`);
  const times: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  await inLanes(command.participants.length, command.concurrency, async (i) => {
    try {
      times.push(await joinOne(command.url, command.origin, command.participants[i]!, command.timeoutMs));
    } catch (error) {
      errors++;
      firstError ??= (error as Error).message;
    }
  });
  const seconds = (performance.now() - started) / 1000;
  return {
    joined: times.length,
    errors,
    ...(firstError ? { firstError } : {}),
    seconds,
    perSecond: times.length / seconds,
    p50: percentile(times, 50),
    p99: percentile(times, 99),
  };
}

/**
 * Pairs of held participants in the same room of the server at `url`. Room
 * numbers repeat from one server to the next, so the server is part of the key:
 * without it, a run holding two servers' participants paired the first
 * server's and relayed every signal through it, whichever was measured.
 */
function pairs(url: string): [Held, Held][] {
  const byRoom = new Map<number, Held[]>();
  for (const h of held) if (h.url === url) byRoom.set(h.room, [...(byRoom.get(h.room) ?? []), h]);
  const found = [...byRoom.values()].filter((members) => members.length >= 2).map((members): [Held, Held] => [members[0]!, members[1]!]);
  if (found.length === 0) throw new Error(`no two participants share a room on ${url}`);
  return found;
}

let seq = 0;
function sendSignal(from: Held, to: Held): void {
  const n = ++seq;
  inFlight.set(n, performance.now());
  // A `signal` is relayed untouched and is not chat-limited; the candidate object carries the sequence number.
  from.socket.send(JSON.stringify({ type: 'signal', to: to.peerId, data: { candidate: { bench: n, candidate: 'candidate:bench', sdpMid: '0' } } }));
}

function relayResult(sent: number, seconds: number): RelayResult {
  const result: RelayResult = {
    sent,
    received: latencies.length,
    lost: inFlight.size,
    rateLimited,
    seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.length ? Math.max(...latencies) : NaN,
  };
  latencies = [];
  inFlight.clear();
  rateLimited = 0;
  return result;
}

/** One message in flight at a time, each pair in turn (alternating direction): latency without queueing. */
async function relaySequential(command: Extract<ClientCommand, { op: 'relay-sequential' }>): Promise<RelayResult> {
  const all = pairs(command.url);
  const started = performance.now();
  let sent = 0;
  for (let k = 0; k < command.messages; k++) {
    const [a, b] = all[k % all.length]!;
    const forward = Math.floor(k / all.length) % 2 === 0;
    const arrived = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), command.timeoutMs);
      onReceived = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
    sendSignal(forward ? a : b, forward ? b : a);
    sent++;
    if (!(await arrived)) break;
  }
  onReceived = null;
  return relayResult(sent, (performance.now() - started) / 1000);
}

/** Every participant sends to its partner at `perSocketRate` messages/s, start times spread evenly: latency under load. */
async function relayLoaded(command: Extract<ClientCommand, { op: 'relay-loaded' }>): Promise<RelayResult> {
  if (command.perSocketRate > MAX_RATE_PER_SOCKET) throw new Error(`at most ${MAX_RATE_PER_SOCKET} messages/s per socket`);
  const all = pairs(command.url);
  const senders = all.flatMap(([a, b]) => [[a, b] as const, [b, a] as const]);
  const period = 1000 / command.perSocketRate;
  const timers: NodeJS.Timeout[] = [];
  let sent = 0;
  const started = performance.now();
  senders.forEach(([from, to], i) => {
    timers.push(
      setTimeout(() => {
        const tick = () => {
          if (from.socket.readyState !== WebSocket.OPEN) return;
          sendSignal(from, to);
          sent++;
        };
        tick();
        timers.push(setInterval(tick, period));
      }, (i / senders.length) * period),
    );
  });
  await new Promise((resolve) => setTimeout(resolve, command.seconds * 1000));
  for (const timer of timers) clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  // Stragglers: whatever has not arrived ten seconds after the last send counts
  // as lost (a server stalled for seconds delivers late, not never).
  const deadline = Date.now() + 10_000;
  while (inFlight.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return relayResult(sent, seconds);
}

async function closeAll(timeoutMs: number): Promise<{ closed: number }> {
  const sockets = held.splice(0).map((h) => h.socket);
  await Promise.race([
    Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.readyState === WebSocket.CLOSED) return resolve();
            socket.once('close', () => resolve());
            socket.close(1000);
          }),
      ),
    ),
    new Promise((resolve) => setTimeout(resolve, timeoutMs)),
  ]);
  for (const socket of sockets) if (socket.readyState !== WebSocket.CLOSED) socket.terminate();
  return { closed: sockets.length };
}

async function run(command: ClientCommand): Promise<unknown> {
  switch (command.op) {
    case 'join':
      return join(command);
    case 'relay-sequential':
      return relaySequential(command);
    case 'relay-loaded':
      return relayLoaded(command);
    case 'close':
      return closeAll(command.timeoutMs);
  }
}

process.on('message', (command: ClientCommand) => {
  run(command).then(
    (result) => process.send!({ ok: true, result } satisfies ClientReply),
    (error: unknown) => process.send!({ ok: false, error: error instanceof Error ? error.message : String(error) } satisfies ClientReply),
  );
});
process.send!({ ok: true, result: 'ready' } satisfies ClientReply);

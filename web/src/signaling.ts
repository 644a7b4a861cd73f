// The WebSocket to the server: requests with one reply each, notifications,
// and reconnecting by itself after a drop (resuming the same participant).
//
// A phone that changes networks (Wi-Fi to cellular) keeps a socket whose
// address is gone: no close, no error, for minutes, until TCP gives up. So
// the page does not wait for the socket to fail: it pings every second and a
// connection silent for DEAD_AFTER_MS is dropped and replaced; a hint that
// the network changed (a peer connection's ICE going `disconnected`, the
// browser's online and network-change events) probes at once and replaces a
// connection that stays silent for PROBE_MS (docs/call.md, "Recovering").
import type { ClientMessage, ServerMessage } from '../../src/shared/protocol.js';

type Reply = Extract<ServerMessage, { requestId: string }> | Extract<ServerMessage, { type: 'error' }>;
type Notification = Exclude<ServerMessage, { type: 'joined' | 'waiting' | 'ack' | 'invite-created' | 'left' | 'pong' }>;

/** Close codes after which reconnecting makes no sense (see src/realtime/close-codes.ts). */
const FINAL_CODES = new Set([1000, 4001, 4002, 4004, 4005, 4006]);
type Body<T> = T extends unknown ? Omit<T, 'requestId'> : never;

export const PING_EVERY_MS = 1000;
/** No frame for this long (two missed pongs and some): the connection is dead. */
export const DEAD_AFTER_MS = 3500;
/** After a hint that the network changed, an answer must come this fast. */
export const PROBE_MS = 1000;
/** Pongs measured on a connection before its queue (Signaling.queueMs) is judged. */
const QUEUE_SAMPLES = 3;
/** A probe unanswered this long already says the connection is in doubt (the page may show it). */
export const DOUBT_AFTER_MS = 250;

/**
 * Each wait is at least its constant, and longer on a link whose pongs come
 * slowly (as TCP's retransmission timeout follows the round trip): at
 * 80 kbit/s a queue of a few hundred milliseconds is normal, not a dead link,
 * and must neither show the banner nor replace the connection.
 */
export function waitFor(base: number, smoothedRttMs: number, rtts: number): number {
  return Math.max(base, rtts * smoothedRttMs);
}

const smooth = (srtt: number, sample: number) => (srtt === 0 ? sample : 0.8 * srtt + 0.2 * sample);

export interface SignalingEvents {
  onMessage(message: Notification): void;
  /** The connection is (re)open: the caller sends its join. */
  onOpen(reconnect: boolean): void;
  onDown(): void;
  /** A probe went unanswered for DOUBT_AFTER_MS (true), or was answered after all (false). */
  onDoubt?(inDoubt: boolean): void;
  onFinalClose(code: number): void;
}

export class Signaling {
  private socket: WebSocket | null = null;
  private pending = new Map<string, (reply: Reply) => void>();
  private counter = 0;
  private attempts = 0;
  private stopped = false;
  private opened = false;
  private lastHeard = 0;
  /** When the ping now waiting for its pong went out (one at a time is measured). */
  private pingSentAt: number | null = null;
  /** Smoothed round trip of ping to pong, in milliseconds (0 until measured). */
  private srtt = 0;
  /** The current connection's round trips: the shortest (its path with empty queues), and smoothed like srtt. */
  private path = { baseRtt: Infinity, srtt: 0, samples: 0 };
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private probeTimer: ReturnType<typeof setTimeout> | null = null;
  private doubtTimer: ReturnType<typeof setTimeout> | null = null;
  private inDoubt = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly url: string,
    private readonly events: SignalingEvents,
  ) {}

  /** Connects, or takes over `socket` (opened ahead by warmSocket) while it is still usable. */
  connect(socket: WebSocket | null = null): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (!socket || socket.readyState > WebSocket.OPEN) socket = new WebSocket(this.url);
    this.socket = socket;
    // A new connection may take another path (the phone moved to cellular): measured afresh.
    this.path = { baseRtt: Infinity, srtt: 0, samples: 0 };
    const opened = () => {
      this.attempts = 0;
      const reconnect = this.opened;
      this.opened = true;
      this.startHeartbeat();
      this.events.onOpen(reconnect);
    };
    socket.onopen = opened;
    socket.onmessage = (event) => {
      this.heard();
      this.clearDoubt();
      const message = JSON.parse(String(event.data)) as ServerMessage;
      if (message.type === 'pong') return this.measure();
      if ('requestId' in message && message.requestId && this.pending.has(message.requestId)) {
        const resolve = this.pending.get(message.requestId)!;
        this.pending.delete(message.requestId);
        resolve(message as Reply);
        return;
      }
      this.events.onMessage(message as Notification);
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      if (FINAL_CODES.has(event.code) && !this.stopped) {
        this.detach();
        this.stopped = true;
        this.events.onFinalClose(event.code);
        return;
      }
      this.lost();
    };
    if (socket.readyState === WebSocket.OPEN) opened();
  }

  /**
   * A hint that the network changed: a connection that does not answer
   * within PROBE_MS is replaced; while none is open, the next attempt starts now.
   */
  probe(): void {
    if (this.stopped) return;
    if (!this.socket) {
      if (this.retryTimer) this.connect();
      return;
    }
    if (this.probeTimer || this.socket.readyState !== WebSocket.OPEN) return;
    const asked = Date.now();
    this.ping();
    this.doubtTimer = setTimeout(() => {
      this.doubtTimer = null;
      if (this.lastHeard >= asked) return;
      this.inDoubt = true;
      this.events.onDoubt?.(true);
    }, waitFor(DOUBT_AFTER_MS, this.srtt, 3));
    this.probeTimer = setTimeout(() => {
      this.probeTimer = null;
      if (this.lastHeard < asked) this.lost();
    }, waitFor(PROBE_MS, this.srtt, 4));
  }

  private ping(): void {
    this.pingSentAt ??= Date.now();
    this.send({ type: 'ping' });
  }

  /** A pong: one more sample of the round trip. */
  private measure(): void {
    if (this.pingSentAt === null) return;
    const sample = Date.now() - this.pingSentAt;
    this.pingSentAt = null;
    this.srtt = smooth(this.srtt, sample);
    this.path = { baseRtt: Math.min(this.path.baseRtt, sample), srtt: smooth(this.path.srtt, sample), samples: this.path.samples + 1 };
  }

  /**
   * How much longer than its shortest the round trip to the server now takes,
   * in milliseconds: the queue in front of this page's own link (null until
   * QUEUE_SAMPLES pongs came on this connection). A thin link that media
   * fills queues the pings too; a thin link at the other end of a call does not.
   */
  get queueMs(): number | null {
    return this.path.samples < QUEUE_SAMPLES ? null : Math.max(0, this.path.srtt - this.path.baseRtt);
  }

  private deadAfter(): number {
    return waitFor(DEAD_AFTER_MS, this.srtt, 6);
  }

  private clearDoubt(): void {
    if (this.doubtTimer) clearTimeout(this.doubtTimer);
    this.doubtTimer = null;
    if (!this.inDoubt) return;
    this.inDoubt = false;
    this.events.onDoubt?.(false);
  }

  /** Whether a connection is open and was heard from lately. */
  get healthy(): boolean {
    return this.socket?.readyState === WebSocket.OPEN && Date.now() - this.lastHeard < this.deadAfter();
  }

  private heard(): void {
    this.lastHeard = Date.now();
  }

  private startHeartbeat(): void {
    this.heard();
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = setInterval(() => {
      if (Date.now() - this.lastHeard > this.deadAfter()) return this.lost();
      this.ping();
    }, PING_EVERY_MS);
  }

  /** Forgets the current socket without waiting for it to close (a dead one may take minutes) and fails its requests. */
  private detach(code = 4000): void {
    const socket = this.socket;
    this.socket = null;
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.heartbeat = null;
    this.probeTimer = null;
    this.pingSentAt = null;
    // No more doubt: the connection is gone (onDown follows) or closed on purpose.
    this.clearDoubt();
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = null;
      if (socket.readyState <= WebSocket.OPEN) socket.close(code);
    }
    for (const resolve of this.pending.values()) resolve({ type: 'error', code: 'unavailable', message: 'connection lost', requestId: '' });
    this.pending.clear();
  }

  /** The connection is gone (closed, or silent): tell the page, and connect again after a short wait. */
  private lost(): void {
    this.detach();
    if (this.stopped) return;
    this.events.onDown();
    // At once, then 0.25 s, 0.5 s, 1 s, 2 s, then every 3 s: quick for a blip, gentle for an outage.
    const delay = this.attempts === 0 ? 0 : Math.min(3000, 125 * 2 ** this.attempts);
    this.attempts++;
    this.retryTimer = setTimeout(() => this.connect(), delay);
  }

  /**
   * Sends a request and resolves with its one reply. When none can come (the
   * connection was lost, or no answer within `timeoutMs`) the page makes up an
   * `unavailable` error with an empty requestId: the server never answered.
   */
  request(message: Body<Extract<ClientMessage, { requestId: string }>>, timeoutMs = 10_000): Promise<Reply> {
    const requestId = `q${++this.counter}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        resolve({ type: 'error', code: 'unavailable', message: 'no answer', requestId: '' });
      }, timeoutMs);
      this.pending.set(requestId, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.send({ ...message, requestId } as ClientMessage);
    });
  }

  send(message: ClientMessage): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  close(): void {
    this.stopped = true;
    this.detach(1000);
    if (this.retryTimer) clearTimeout(this.retryTimer);
  }
}

/** The signaling endpoint of the server that served the page. */
export function signalingUrl(): string {
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`;
}

/**
 * A signaling connection opened while the join screen shows, so that Join
 * does not wait for the TCP and WebSocket handshakes (bench/README.md,
 * browser). The server closes a connection that has not joined within 15 s
 * (4003); a new one replaces it, so one is always ready. take() hands the
 * socket over (null when none is usable) and stops replacing it.
 */
export function warmSocket(url: string): { take(): WebSocket | null; ping(timeoutMs?: number): Promise<number | null> } {
  let socket: WebSocket | null = null;
  let taken = false;
  const open = () => {
    const current = new WebSocket(url);
    let wasOpen = false;
    current.onopen = () => {
      wasOpen = true;
    };
    // Replaced at once after the server's idle close; after a failure (server down), in a few seconds.
    current.onclose = () => {
      if (!taken) setTimeout(open, wasOpen ? 0 : 3000);
    };
    socket = current;
  };
  open();
  return {
    take() {
      taken = true;
      return socket && socket.readyState <= WebSocket.OPEN ? socket : null;
    },
    /** The time the server takes to answer a ping on this connection (waiting for it to open), null without an answer. */
    async ping(timeoutMs = 5000) {
      const started = performance.now();
      const deadline = started + timeoutMs;
      while (socket?.readyState !== WebSocket.OPEN) {
        if (performance.now() > deadline || taken) return null;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const current = socket;
      return new Promise<number | null>((resolve) => {
        const sent = performance.now();
        const timer = setTimeout(() => finish(null), Math.max(0, deadline - sent));
        const onMessage = (event: MessageEvent) => {
          if (String(event.data).includes('"pong"')) finish(Math.round(performance.now() - sent));
        };
        function finish(result: number | null) {
          clearTimeout(timer);
          current.removeEventListener('message', onMessage);
          resolve(result);
        }
        current.addEventListener('message', onMessage);
        current.send(JSON.stringify({ type: 'ping' }));
      });
    },
  };
}

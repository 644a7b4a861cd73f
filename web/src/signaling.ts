// The WebSocket to the server: requests with one reply each, notifications,
// and reconnecting by itself after a drop (resuming the same participant).
import type { ClientMessage, ServerMessage } from '../../src/realtime/protocol.js';

type Reply = Extract<ServerMessage, { requestId: string }> | Extract<ServerMessage, { type: 'error' }>;
type Notification = Exclude<ServerMessage, { type: 'joined' | 'ack' | 'invite-created' | 'left' }>;

/** Close codes after which reconnecting makes no sense (see src/realtime/close-codes.ts). */
const FINAL_CODES = new Set([1000, 4001, 4002, 4004]);
type Body<T> = T extends unknown ? Omit<T, 'requestId'> : never;

export interface SignalingEvents {
  onMessage(message: Notification): void;
  /** The connection is (re)open: the caller sends its join. */
  onOpen(reconnect: boolean): void;
  onDown(): void;
  onFinalClose(code: number): void;
}

export class Signaling {
  private socket: WebSocket | null = null;
  private pending = new Map<string, (reply: Reply) => void>();
  private counter = 0;
  private attempts = 0;
  private stopped = false;
  private opened = false;

  constructor(
    private readonly url: string,
    private readonly events: SignalingEvents,
  ) {}

  /** Connects, or takes over `socket` (opened ahead by warmSocket) while it is still usable. */
  connect(socket: WebSocket | null = null): void {
    if (!socket || socket.readyState > WebSocket.OPEN) socket = new WebSocket(this.url);
    this.socket = socket;
    const opened = () => {
      this.attempts = 0;
      const reconnect = this.opened;
      this.opened = true;
      this.events.onOpen(reconnect);
    };
    socket.onopen = opened;
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as ServerMessage;
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
      this.socket = null;
      for (const resolve of this.pending.values()) resolve({ type: 'error', code: 'unavailable', message: 'Connection lost', requestId: '' });
      this.pending.clear();
      if (this.stopped) return;
      if (FINAL_CODES.has(event.code)) {
        this.stopped = true;
        this.events.onFinalClose(event.code);
        return;
      }
      this.events.onDown();
      // 0.25 s, 0.5 s, 1 s, 2 s, then every 3 s: quick for a blip, gentle for an outage.
      const delay = Math.min(3000, 250 * 2 ** this.attempts++);
      setTimeout(() => this.connect(), delay);
    };
    if (socket.readyState === WebSocket.OPEN) opened();
  }

  request(message: Body<Extract<ClientMessage, { requestId: string }>>, timeoutMs = 10_000): Promise<Reply> {
    const requestId = `q${++this.counter}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(requestId);
        resolve({ type: 'error', code: 'unavailable', message: 'No answer from the server', requestId });
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
    this.socket?.close(1000);
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
export function warmSocket(url: string): { take(): WebSocket | null } {
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
  };
}

// A signaling client over a real `ws` socket that keeps every message it
// receives, and what the signaling tests share about it: the documented shape
// of a signaling error (docs/signaling.md), a token arbitrary shaped like a
// real join or participant token, a call of two.
import fc from 'fast-check';
import WebSocket from 'ws';
import type { ServerMessage } from '../../src/shared/protocol.js';
import type { RealtimeServer } from './realtime-server.js';

let nextId = 0;

/** A signaling client that keeps every message it receives, in order. */
export class Client {
  readonly received: ServerMessage[] = [];
  private cursor = 0;
  /** Replies already returned by request(): next() does not return them again. */
  private taken = new Set<ServerMessage>();
  private waiters: (() => void)[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      this.received.push(JSON.parse(String(data)) as ServerMessage);
      for (const w of this.waiters.splice(0)) w();
    });
    this.closed = new Promise((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  }

  static open(url: string, origin: string): Promise<Client> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { origin });
      socket.once('open', () => resolve(new Client(socket)));
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
  }

  send(message: unknown): void {
    this.socket.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /**
   * The next message (after those already taken) that matches, within `timeoutMs`: a deadline for
   * a loaded CI machine, not a measure of speed (a test that times something passes its own).
   */
  async next<T extends ServerMessage['type']>(type: T, timeoutMs = 10_000): Promise<Extract<ServerMessage, { type: T }>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.cursor < this.received.length) {
        const message = this.received[this.cursor++]!;
        if (message.type === type && !this.taken.has(message)) return message as Extract<ServerMessage, { type: T }>;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no "${type}" message within ${timeoutMs} ms; got ${JSON.stringify(this.received.map((m) => m.type))}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends a request and returns its one reply (the message carrying the same requestId). */
  async request(message: Record<string, unknown>, timeoutMs = 10_000): Promise<ServerMessage> {
    const requestId = `r${++nextId}`;
    this.send({ ...message, requestId });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const reply = this.received.find((m) => 'requestId' in m && m.requestId === requestId);
      if (reply) {
        this.taken.add(reply);
        return reply;
      }
      if (Date.now() > deadline) throw new Error(`no reply to ${String(message.type)} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async join(joinToken: string, displayName = 'Someone', participantToken?: string) {
    const reply = await this.request({ type: 'join', joinToken, displayName, ...(participantToken ? { participantToken } : {}) });
    if (reply.type !== 'joined') throw new Error(`join failed: ${JSON.stringify(reply)}`);
    return reply;
  }

  /** Every message of `type` received so far (taken or not). */
  all<T extends ServerMessage['type']>(type: T): Extract<ServerMessage, { type: T }>[] {
    return this.received.filter((m) => m.type === type) as Extract<ServerMessage, { type: T }>[];
  }

  terminate(): void {
    this.socket.terminate();
  }
}

/** The error codes docs/signaling.md documents; anything else is a defect. */
export const DOCUMENTED_ERROR_CODES = [
  'bad-request',
  'too-large',
  'unknown-type',
  'not-joined',
  'already-joined',
  'not-found',
  'room-closed',
  'room-full',
  'chat-disabled',
  'screenshare-disabled',
  'invites-disabled',
  'forbidden',
  'rate-limited',
  'not-admitted',
  'removed',
  'denied',
  'recording-disabled',
  'recording-unavailable',
  'recording-busy',
] as const;

/** Why a server message is not a well-formed error, or null when it is one. */
export function errorShapeProblem(message: ServerMessage): string | null {
  if (message.type !== 'error') return null;
  const keys = Object.keys(message).sort().join(',');
  if (keys !== 'code,message,type' && keys !== 'code,message,requestId,type') return `error with keys ${keys}`;
  if (!(DOCUMENTED_ERROR_CODES as readonly string[]).includes(message.code)) return `undocumented error code ${message.code}: ${message.message}`;
  if (typeof message.message !== 'string' || message.message === '') return 'error without a message';
  if ('requestId' in message && (typeof message.requestId !== 'string' || message.requestId === '')) return 'error with an empty requestId';
  return null;
}

/** A token with the shape of a real one (43 base64url characters, 256 bits): only luck would make it valid. */
export const tokenShaped = fc.stringMatching(/^[A-Za-z0-9_-]{43}$/);

/** A new room with its host and its guest in the call (the host has seen the guest arrive). */
export async function joinedPair(server: RealtimeServer, overrides: Record<string, unknown> = {}) {
  const room = await server.createRoom(overrides);
  const host = await server.connect();
  const guest = await server.connect();
  const h = await host.join(room.access_token, 'Host');
  const g = await guest.join(room.guest_token, 'Guest');
  await host.next('peer-joined');
  return { room, host, guest, h, g };
}

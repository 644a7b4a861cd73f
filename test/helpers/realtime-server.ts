// A real Parley (REST, pages, WebSocket) on 127.0.0.1 with an ephemeral port
// over the test database, and a small real `ws` client for signaling tests.
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/build-app.js';
import { joinRoutes } from '../../src/http/routes/join.routes.js';
import type { WebBuild } from '../../src/http/routes/web-assets.js';
import type { ServerMessage } from '../../src/realtime/protocol.js';
import { realtimePlugin } from '../../src/realtime/ws-server.js';
import { createServices, type Services } from '../../src/services.js';
import { roomBody } from '../helpers/app.js';
import { openTestDatabase } from '../helpers/database.js';

export const ORIGIN = 'http://parley.test';

export interface RealtimeServer {
  app: FastifyInstance;
  services: Services;
  wsUrl: string;
  token: string;
  createRoom(overrides?: Record<string, unknown>): Promise<Record<string, any>>;
  getRoom(token: string): Promise<Record<string, any>>;
  api(method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: unknown): Promise<{ statusCode: number; json: () => any }>;
  connect(origin?: string): Promise<Client>;
  close(): Promise<void>;
}

export async function startRealtimeServer(
  env: Record<string, string> = {},
  build: WebBuild | null = null,
  options: { logStream?: NodeJS.WritableStream } = {},
): Promise<RealtimeServer> {
  const database = await openTestDatabase();
  const config = loadConfig({ PUBLIC_URL: ORIGIN, LOG_LEVEL: 'warn', HEARTBEAT_INTERVAL_SECONDS: '1', ...env });
  const services = createServices({ database, config });
  const app = await buildApp({ services, logStream: options.logStream, plugins: [joinRoutes(services, build), realtimePlugin({ services })] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  await services.participation.registerNode();
  const address = app.server.address() as { port: number };
  const tenant = await services.tenants.createTenant({ name: 'Realtime' });
  const { token } = await services.tenants.issueToken(tenant.id, {});
  const clients: Client[] = [];
  const api = async (method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
    app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return {
    app,
    services,
    wsUrl: `ws://127.0.0.1:${address.port}/ws`,
    token,
    api,
    async createRoom(overrides = {}) {
      const res = await api('POST', '/api/rooms', roomBody(overrides));
      if (res.statusCode !== 201) throw new Error(`room not created: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    async getRoom(roomToken) {
      return (await api('GET', `/api/rooms/${roomToken}`)).json();
    },
    async connect(origin = ORIGIN) {
      const client = await Client.open(`ws://127.0.0.1:${address.port}/ws`, origin);
      clients.push(client);
      return client;
    },
    async close() {
      for (const c of clients) c.terminate();
      await app.close();
      await database.close();
    },
  };
}

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

  /** The next message (after those already taken) that matches, within `timeoutMs`. */
  async next<T extends ServerMessage['type']>(type: T, timeoutMs = 3000): Promise<Extract<ServerMessage, { type: T }>> {
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
  async request(message: Record<string, unknown>, timeoutMs = 3000): Promise<ServerMessage> {
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

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true or `timeoutMs` passes. */
export async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within ${timeoutMs} ms`);
    await sleep(50);
  }
}

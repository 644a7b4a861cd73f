// A real Parley in this process (REST, pages, WebSocket) listening on
// 127.0.0.1 with an ephemeral port over the test database; connect() opens a
// signaling client (ws-client.ts) to it.
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/build-app.js';
import { joinRoutes } from '../../src/http/routes/join.routes.js';
import type { WebBuild } from '../../src/http/routes/web-assets.js';
import { realtimePlugin } from '../../src/realtime/ws-server.js';
import { createServices, type Services } from '../../src/services.js';
import { roomBody } from './app.js';
import { openTestDatabase } from './database.js';
import { Client } from './ws-client.js';

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
  // A drop is a leave at once unless a test sets the reconnect grace (test/realtime/presence.test.ts does).
  const config = loadConfig({ PUBLIC_URL: ORIGIN, LOG_LEVEL: 'warn', HEARTBEAT_INTERVAL_SECONDS: '1', RECONNECT_GRACE_SECONDS: '0', ...env });
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

// kill -9 of a node in the middle of webhook deliveries (docs/webhooks.md
// "Delivery"): the events were committed with their changes, so after a
// restart on the same data every one of them reaches the receiver, each with
// the webhook-id it had before the crash.
// Follows TEST_DB: PGlite in a temporary DATA_DIR, or a fresh PostgreSQL database.
import { afterAll, describe, expect, it } from 'vitest';
import { httpJson } from '../helpers/api.js';
import { testDb } from '../helpers/database.js';
import { adminTenantToken, serverDatabase, startServerProcess, stopServerProcess, waitForExit, type ServerProcess } from '../helpers/server-process.js';
import { eventually } from '../helpers/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const ROOMS = 15;

let database: Awaited<ReturnType<typeof serverDatabase>> | undefined;
let server: ServerProcess | undefined;
let receiver: WebhookReceiver | undefined;

afterAll(async () => {
  await stopServerProcess(server);
  await receiver?.close();
  await database?.remove();
});

describe(`kill -9 mid-delivery (${testDb})`, () => {
  it('loses no webhook: after the restart every event is delivered, under its first webhook-id', { timeout: 240_000 }, async () => {
    database = await serverDatabase();
    receiver = await startWebhookReceiver();
    // The receiver is on 127.0.0.1; a short time limit keeps the lease (3 x the limit) short.
    const env = { ...database.env, WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOKS_TIMEOUT_SECONDS: '2', RATE_LIMIT_PER_MINUTE: '0' };
    server = await startServerProcess(env);
    const { token } = await adminTenantToken(server.url);
    const created = await httpJson(server.url, token, 'POST', '/api/webhook_endpoints', { url: receiver.url, events: ['room.closed'] });
    expect(created.status).toBe(201);

    // The receiver holds every request open: the node is in the middle of delivering when it dies.
    receiver.answer = 'hang';
    const rooms: string[] = [];
    for (let i = 0; i < ROOMS; i++) {
      const room = await httpJson(server.url, token, 'POST', '/api/rooms', { name: `Room ${i}`, meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' });
      rooms.push(room.json.token);
      expect((await httpJson(server.url, token, 'POST', `/api/rooms/${room.json.token}/close`)).status).toBe(204);
    }
    await eventually(() => receiver!.received.length > 0, 20_000, 'a delivery under way');
    const idsBefore = new Map(receiver.received.map((r) => [JSON.parse(r.body).data.room_token as string, String(r.headers['webhook-id'])]));
    server.child.kill('SIGKILL');
    expect((await waitForExit(server, 10_000)).signal).toBe('SIGKILL');
    expect(receiver.received.every((r) => r.status === undefined)).toBe(true);

    receiver.answer = 204;
    server = await startServerProcess(env);
    // Every room's event answered 2xx once the lease of the dead node's claims ran out.
    const answered = () => new Set(receiver!.received.filter((r) => r.status === 204).map((r) => JSON.parse(r.body).data.room_token as string));
    await eventually(() => answered().size === ROOMS, 60_000, 'every room.closed delivered');
    expect([...answered()].sort()).toEqual([...rooms].sort());
    for (const r of receiver.received.filter((x) => x.status === 204)) {
      const room = JSON.parse(r.body).data.room_token as string;
      if (idsBefore.has(room)) expect(r.headers['webhook-id']).toBe(idsBefore.get(room));
    }
  });
});

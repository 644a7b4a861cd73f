// Two nodes delivering the same outbox on one PostgreSQL (docs/webhooks.md
// "Delivery"): their claims (FOR UPDATE SKIP LOCKED) never hand the same
// attempt to both, so a healthy receiver gets each event exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { openPostgres } from '../../src/db/client.js';
import { enqueueEvent } from '../../src/domain/webhooks/webhook-events.js';
import { createServices, type Services } from '../../src/services.js';
import { openTestDatabase, testDb } from '../helpers/database.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const EVENTS = 300;

describe.skipIf(testDb !== 'postgres')('two nodes on one PostgreSQL', () => {
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let nodes: Services[];
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    database = await openTestDatabase();
    const config = loadConfig({ PUBLIC_URL: 'http://parley.test', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' });
    // Each node its own pool on the same database, as two processes would have.
    const second = await openPostgres(database.url!, 10);
    nodes = [createServices({ database, config }), createServices({ database: second, config })];
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
    await nodes[1]!.database.close();
    await database.close();
  });

  it('delivers every event exactly once while both deliver at the same time', { timeout: 60_000 }, async () => {
    const [a, b] = nodes as [Services, Services];
    const tenant = await a.tenants.createTenant({ name: 'Two nodes' });
    const token = await a.tenants.issueToken(tenant.id, {});
    const principal = await a.auth.authenticate(`Bearer ${token.token}`);
    await a.webhookEndpoints.create(principal, { url: receiver.url });
    await a.database.db.transaction().execute(async (tx) => {
      for (let i = 0; i < EVENTS; i++) {
        await enqueueEvent(tx, tenant.id, { type: 'room.closed', data: { room_token: `room-${i}`, status: 'closed', organization_id: null } });
      }
    });
    // Each node keeps delivering until the outbox is empty, both at once.
    const drain = async (node: Services) => {
      let sent = 0;
      for (let batch = await node.webhookDelivery.deliverDue(); batch.length; batch = await node.webhookDelivery.deliverDue()) sent += batch.length;
      return sent;
    };
    const [byA, byB] = await Promise.all([drain(a), drain(b)]);
    expect(byA + byB).toBe(EVENTS);
    // Both took part, or the test proved nothing about two nodes.
    expect(byA).toBeGreaterThan(0);
    expect(byB).toBeGreaterThan(0);

    const ids = receiver.received.map((r) => String(r.headers['webhook-id']));
    expect(ids).toHaveLength(EVENTS);
    expect(new Set(ids).size).toBe(EVENTS);
    const rooms = new Set(receiver.received.map((r) => (JSON.parse(r.body) as { data: { room_token: string } }).data.room_token));
    expect(rooms.size).toBe(EVENTS);
    const attempts = await a.database.db.selectFrom('webhook_messages').select('attempts').where('delivered_at', 'is not', null).execute();
    expect(attempts.map((r) => r.attempts)).toEqual(Array(EVENTS).fill(1));
  });
});

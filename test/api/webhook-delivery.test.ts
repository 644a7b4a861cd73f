// Webhook delivery (docs/webhooks.md; docs/design.md, "Webhooks") to a real receiver on
// 127.0.0.1, so these tests set WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true; the
// refusal without it is proved below. Signatures are checked with the
// standardwebhooks library integrators use.
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { enqueueEvent } from '../../src/domain/webhooks/webhook-events.js';
import { RETRY_DELAYS_SECONDS } from '../../src/domain/webhooks/retry-schedule.js';
import { createTestContext, manualClock, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom } from '../helpers/api.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const ALLOW = { WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', ROOM_END_GRACE_SECONDS: '0' };

let receiver: WebhookReceiver;
beforeAll(async () => {
  receiver = await startWebhookReceiver();
});
afterEach(() => {
  receiver.received.length = 0;
  receiver.answer = 204;
});
afterAll(() => receiver.close());

async function addEndpoint(ctx: TestContext, token: string, body: Record<string, unknown> = {}) {
  const res = await ctx.request({ method: 'POST', url: '/api/webhook_endpoints', token, payload: { url: receiver.url, ...body } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

const headersOf = (r: { headers: Record<string, unknown> }) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

/** A test context for one test, closed however the test ends. */
async function withContext(options: Parameters<typeof createTestContext>[0], test: (ctx: TestContext) => Promise<void>) {
  const ctx = await createTestContext(options);
  try {
    await test(ctx);
  } finally {
    await ctx.close();
  }
}

/** A new room of the tenant, closed at once: one room.closed event. */
async function closeARoom(ctx: TestContext, token: string) {
  const room = await createRoom(ctx, token);
  expect((await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token })).statusCode).toBe(204);
  return room;
}

async function messageCount(ctx: TestContext): Promise<number> {
  const row = await ctx.services.database.db.selectFrom('webhook_messages').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A whole call: host and guest join, the guest gives feedback, both leave, the room ends, is closed and deleted. */
async function aCall(ctx: TestContext, tenant: TestTenant) {
  const room = await createRoom(ctx, tenant.instanceToken);
  const host = await ctx.services.participation.join({ joinToken: room.access_token, displayName: 'Dr. Ada' });
  const guest = await ctx.services.participation.join({ joinToken: room.guest_token, displayName: 'Pat' });
  await ctx.services.participation.leave(guest.participant.token);
  await ctx.services.participation.submitFeedback(guest.participant.token, 'good', 'Clear and kind');
  await ctx.services.participation.leave(host.participant.token);
  await ctx.services.participation.sweep();
  expect((await ctx.request({ method: 'POST', url: `/api/rooms/${room.token}/close`, token: tenant.instanceToken })).statusCode).toBe(204);
  expect((await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: tenant.instanceToken })).statusCode).toBe(204);
  return { room, host: host.participant, guest: guest.participant };
}

describe('a call, delivered', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await createTestContext({ env: ALLOW });
  });
  afterAll(() => ctx.close());

  it('sends every event once, signed so that standardwebhooks verifies it, with the data docs/design.md, "Webhooks" lists and no secret token', async () => {
    const tenant = await ctx.tenant();
    const { secret } = await addEndpoint(ctx, tenant.instanceToken);
    const { room, host, guest } = await aCall(ctx, tenant);
    const outcomes = await ctx.services.webhookDelivery.deliverDue();
    expect(outcomes.every((o) => o.ok)).toBe(true);

    expect(receiver.types()).toEqual([
      'room.started',
      'participant.joined',
      'participant.joined',
      'participant.left',
      'feedback.created',
      'participant.left',
      'room.ended',
      'room.closed',
      'room.deleted',
    ]);
    const verifier = new Webhook(secret);
    const bodies = receiver.received.map((r) => {
      expect(r.headers['content-type']).toBe('application/json');
      return verifier.verify(r.body, headersOf(r)) as { type: string; timestamp: string; data: Record<string, unknown> };
    });
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(9);
    for (const body of bodies) expect(body.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(bodies[0]!.data).toEqual({ room_token: room.token, status: 'started', organization_id: null });
    expect(bodies[1]!.data).toEqual({ room_token: room.token, participant_token: host.token, role: 'host', display_name: 'Dr. Ada' });
    expect(bodies[3]!.data).toEqual({ room_token: room.token, participant_token: guest.token, role: 'guest', display_name: 'Pat' });
    expect(bodies[4]!.data).toEqual({ room_token: room.token, rating: 'good', feedback: 'Clear and kind', created_at: expect.any(String) });
    expect(bodies[8]!.data).toEqual({ room_token: room.token, status: 'closed', organization_id: null });
    const all = receiver.received.map((r) => r.body).join('\n');
    for (const hidden of [room.access_token, room.guest_token, '/join/']) expect(all).not.toContain(hidden);

    // A tampered body or another endpoint's secret does not verify.
    const first = receiver.received[0]!;
    expect(() => verifier.verify(first.body.replace('started', 'ended'), headersOf(first))).toThrow();
    const other = await addEndpoint(ctx, tenant.instanceToken);
    expect(() => new Webhook(other.secret).verify(first.body, headersOf(first))).toThrow();
    // Delivered once: nothing is due any more.
    expect(await ctx.services.webhookDelivery.deliverDue()).toEqual([]);
  });

  it('tells of the waiting room: participant.waiting, joined when let in, left only for those who were in the call', async () => {
    const tenant = await ctx.tenant();
    await addEndpoint(ctx, tenant.instanceToken, { events: ['participant.waiting', 'participant.joined', 'participant.left'] });
    const room = await createRoom(ctx, tenant.instanceToken, { enable_waiting_room: true });
    const { participation } = ctx.services;
    const host = await participation.join({ joinToken: room.access_token, displayName: 'Dr. Ada' });
    const admitted = await participation.join({ joinToken: room.guest_token, displayName: 'Pat' });
    const denied = await participation.join({ joinToken: room.guest_token, displayName: 'Mallory' });
    expect(await participation.admit(host.room.id, admitted.participant.peerId)).toMatchObject({ ok: true });
    expect(await participation.turnAway(host.room.id, denied.participant.peerId, 'denied')).not.toBeNull();
    expect(await participation.turnAway(host.room.id, admitted.participant.peerId, 'removed')).not.toBeNull();
    expect((await ctx.services.webhookDelivery.deliverDue()).every((o) => o.ok)).toBe(true);
    const events = receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: { display_name: string } });
    expect(events.map((e) => `${e.type} ${e.data.display_name}`)).toEqual([
      'participant.joined Dr. Ada',
      'participant.waiting Pat',
      'participant.waiting Mallory',
      'participant.joined Pat',
      'participant.left Pat',
    ]);
    // Nobody stays connected for the tests after this one.
    await participation.leave(host.participant.token);
    await ctx.services.webhookDelivery.deliverDue();
  });

  it('sends an endpoint only the types it asked for', async () => {
    const tenant = await ctx.tenant();
    await addEndpoint(ctx, tenant.instanceToken, { events: ['room.closed', 'feedback.created'] });
    await aCall(ctx, tenant);
    await ctx.services.webhookDelivery.deliverDue();
    expect(receiver.types()).toEqual(['feedback.created', 'room.closed']);
  });

  it('sends room.deleted for a room the automatic cleanup deletes, and participant.left for the participants of a node that died', async () => {
    const tenant = await ctx.tenant();
    await addEndpoint(ctx, tenant.instanceToken, { events: ['room.deleted', 'participant.left'] });
    const expired = await createRoom(ctx, tenant.instanceToken);
    // Its last activity long past: the cleanup's next run deletes it.
    await ctx.services.database.db.updateTable('rooms').set({ cleanup_base_at: new Date('2000-01-01T00:00:00Z') }).where('token', '=', expired.token).execute();
    const room = await createRoom(ctx, tenant.instanceToken);
    const guest = await ctx.services.participation.join({ joinToken: room.guest_token, displayName: 'Pat' });
    await ctx.services.repos.participants.leaveNodes({ nodeId: ctx.config.nodeId }, new Date());
    expect(await ctx.services.cleanup.run()).toContain(expired.token);
    await ctx.services.webhookDelivery.deliverDue();
    const bodies = receiver.received.map((r) => JSON.parse(r.body));
    expect(bodies.map((b) => [b.type, b.data.room_token, b.data.participant_token])).toEqual([
      ['participant.left', room.token, guest.participant.token],
      ['room.deleted', expired.token, undefined],
    ]);
  });

  it('writes nothing for a tenant without endpoints, nor for a disabled endpoint', async () => {
    const before = await messageCount(ctx);
    const tenant = await ctx.tenant();
    await aCall(ctx, tenant);
    const { id } = await addEndpoint(ctx, tenant.instanceToken);
    await ctx.services.database.db.updateTable('webhook_endpoints').set({ disabled_at: new Date(), disabled_reason: 'test' }).where('id', '=', id).execute();
    await aCall(ctx, tenant);
    expect(await messageCount(ctx)).toBe(before);
  });

  it('deletes the messages of a deleted endpoint, or of a deleted tenant; a message whose endpoint is gone is never sent, and is purged', async () => {
    const db = ctx.services.database.db;
    const messagesOf = async (endpointId: string) =>
      Number((await db.selectFrom('webhook_messages').where('endpoint_id', '=', endpointId).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);

    const tenant = await ctx.tenant();
    const { id } = await addEndpoint(ctx, tenant.instanceToken);
    await closeARoom(ctx, tenant.instanceToken);
    expect(await messagesOf(id)).toBe(1);
    expect((await ctx.request({ method: 'DELETE', url: `/api/webhook_endpoints/${id}`, token: tenant.instanceToken })).statusCode).toBe(204);
    expect(await messagesOf(id)).toBe(0);

    const other = await ctx.tenant();
    const { id: otherId } = await addEndpoint(ctx, other.instanceToken);
    await closeARoom(ctx, other.instanceToken);
    expect(await messagesOf(otherId)).toBe(1);
    await db.deleteFrom('tenants').where('id', '=', other.id).execute();
    expect(await messagesOf(otherId)).toBe(0);

    // What a join leaves when it writes its message while the endpoint is being
    // deleted: its snapshot still saw the endpoint, the delete's did not see the message.
    await ctx.services.webhookDelivery.deliverDue();
    receiver.received.length = 0;
    const gone = '00000000-0000-4000-8000-000000000001';
    await db.insertInto('webhook_messages').values({ endpoint_id: gone, msg_id: 'msg_orphan', type: 'room.closed', data: JSON.stringify({}), occurred_at: new Date() }).execute();
    expect(await ctx.services.webhookDelivery.deliverDue()).toEqual([]);
    expect(receiver.received).toEqual([]);
    expect(await ctx.services.webhookDelivery.purgeDone()).toBeGreaterThanOrEqual(1);
    expect(await messagesOf(gone)).toBe(0);
  });

  it('enqueueEvent commits and rolls back with the transaction it is given (participant.waiting, for the waiting room)', async () => {
    const tenant = await ctx.tenant();
    await addEndpoint(ctx, tenant.instanceToken);
    const waiting = { type: 'participant.waiting' as const, data: { room_token: 'r'.repeat(22), participant_token: 'p'.repeat(43), role: 'guest' as const, display_name: 'Pat' } };
    await ctx.services.database.db
      .transaction()
      .execute(async (tx) => {
        await enqueueEvent(tx, tenant.id, waiting);
        throw new Error('roll back');
      })
      .catch(() => {});
    await ctx.services.database.db.transaction().execute((tx) => enqueueEvent(tx, tenant.id, waiting));
    await ctx.services.webhookDelivery.deliverDue();
    expect(receiver.types()).toEqual(['participant.waiting']);
    expect(JSON.parse(receiver.received[0]!.body).data).toEqual(waiting.data);
  });

  it('does not follow a redirect: a 3xx is a failure, retried later', async () => {
    const tenant = await ctx.tenant();
    await addEndpoint(ctx, tenant.instanceToken, { events: ['room.closed'] });
    receiver.answer = 307;
    await closeARoom(ctx, tenant.instanceToken);
    const [outcome] = await ctx.services.webhookDelivery.deliverDue();
    expect(outcome).toEqual({ ok: false, status: 307, error: expect.stringMatching(/redirects are not followed/) });
    expect(receiver.received).toHaveLength(1);
  });
});

/**
 * Each test below starts an app of its own (its own database, clock or
 * settings), and that start counts in the test's time: 2 s on a quiet machine,
 * far more on a loaded one. The limit is the config's 20 s raised to one only a
 * hung test misses; what each test proves is on the manual clock.
 */
const OWN_APP = { timeout: 120_000 };

describe('retries', OWN_APP, () => {
  it('retries a failing receiver with growing delays for more than a day, the first within 10 s, with the same webhook-id', async () => {
    const clock = manualClock(new Date());
    await withContext({ env: ALLOW, clock }, async (ctx) => {
      const tenant = await ctx.tenant();
      await addEndpoint(ctx, tenant.instanceToken, { events: ['room.closed'] });
      await closeARoom(ctx, tenant.instanceToken);
      receiver.answer = 500;
      expect(await ctx.services.webhookDelivery.deliverDue()).toHaveLength(1);
      const nextAttempt = async () =>
        (await ctx.services.database.db.selectFrom('webhook_messages').select(['next_attempt_at', 'failed_at']).executeTakeFirstOrThrow()).next_attempt_at;
      const delays: number[] = [];
      for (let next = await nextAttempt(); next !== null; next = await nextAttempt()) {
        const failedAt = clock.now().getTime();
        // Not a moment before its time, and at its time.
        clock.set(new Date(next.getTime() - 1));
        expect(await ctx.services.webhookDelivery.deliverDue()).toEqual([]);
        clock.set(next);
        expect(await ctx.services.webhookDelivery.deliverDue()).toHaveLength(1);
        delays.push((next.getTime() - failedAt) / 1000);
      }
      expect(delays).toEqual([...RETRY_DELAYS_SECONDS]);
      expect(delays[0]).toBeLessThanOrEqual(10);
      for (let i = 1; i < delays.length; i++) expect(delays[i]).toBeGreaterThanOrEqual(delays[i - 1]!);
      expect(delays.reduce((a, b) => a + b, 0)).toBeGreaterThan(86400);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
      expect(receiver.received).toHaveLength(delays.length + 1);
      // Each attempt is signed anew (its own timestamp) over the same body.
      expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
      expect(new Set(receiver.received.map((r) => r.headers['webhook-timestamp'])).size).toBe(receiver.received.length);
      const row = await ctx.services.database.db.selectFrom('webhook_messages').selectAll().executeTakeFirstOrThrow();
      expect(row).toMatchObject({ attempts: delays.length + 1, last_status: 500, delivered_at: null, failed_at: expect.any(Date) });
    });
  });

  it('a receiver that recovers gets the message on the next retry, once', async () => {
    const clock = manualClock(new Date());
    await withContext({ env: ALLOW, clock }, async (ctx) => {
      const tenant = await ctx.tenant();
      const { id } = await addEndpoint(ctx, tenant.instanceToken, { events: ['room.closed'] });
      await closeARoom(ctx, tenant.instanceToken);
      receiver.answer = 503;
      await ctx.services.webhookDelivery.deliverDue();
      const failing = (await ctx.request({ method: 'GET', url: '/api/webhook_endpoints', token: tenant.instanceToken })).json().webhook_endpoints[0];
      expect(failing).toMatchObject({ id, status: 'enabled', failing_since: clock.now().toISOString() });
      receiver.answer = 200;
      clock.advance(RETRY_DELAYS_SECONDS[0] * 1000);
      expect(await ctx.services.webhookDelivery.deliverDue()).toEqual([{ ok: true, status: 200 }]);
      clock.advance(86_400_000);
      expect(await ctx.services.webhookDelivery.deliverDue()).toEqual([]);
      expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([receiver.received[0]!.headers['webhook-id'], receiver.received[0]!.headers['webhook-id']]);
      const recovered = (await ctx.request({ method: 'GET', url: '/api/webhook_endpoints', token: tenant.instanceToken })).json().webhook_endpoints[0];
      expect(recovered.failing_since).toBeNull();
    });
  });

  it('an endpoint failing for days is disabled, with the reason in GET; it gets nothing more', async () => {
    const clock = manualClock(new Date());
    await withContext({ env: { ...ALLOW, WEBHOOKS_DISABLE_AFTER_DAYS: '5' }, clock }, async (ctx) => {
      const tenant = await ctx.tenant();
      await addEndpoint(ctx, tenant.instanceToken, { events: ['room.closed'] });
      receiver.answer = 500;
      const endpoint = async () => (await ctx.request({ method: 'GET', url: '/api/webhook_endpoints', token: tenant.instanceToken })).json().webhook_endpoints[0];
      for (let day = 0; day < 5; day++) {
        await closeARoom(ctx, tenant.instanceToken);
        await ctx.services.webhookDelivery.deliverDue();
        expect((await endpoint()).status).toBe('enabled');
        clock.advance(86_400_000);
      }
      await closeARoom(ctx, tenant.instanceToken);
      await ctx.services.webhookDelivery.deliverDue();
      const disabled = await endpoint();
      expect(disabled).toMatchObject({ status: 'disabled', disabled_at: clock.now().toISOString() });
      expect(disabled.disabled_reason).toMatch(/failed since .*HTTP 500/);
      const sent = receiver.received.length;
      await closeARoom(ctx, tenant.instanceToken);
      clock.advance(86_400_000);
      expect(await ctx.services.webhookDelivery.deliverDue()).toEqual([]);
      expect(receiver.received).toHaveLength(sent);
    });
  });

  it('a claimed message whose node never reported back is sent again after the lease, with the same webhook-id', async () => {
    const clock = manualClock(new Date());
    await withContext({ env: { ...ALLOW, WEBHOOKS_TIMEOUT_SECONDS: '2' }, clock }, async (ctx) => {
      const tenant = await ctx.tenant();
      await addEndpoint(ctx, tenant.instanceToken, { events: ['room.closed'] });
      await closeARoom(ctx, tenant.instanceToken);
      // A node claims the message and dies before sending it.
      const now = clock.now();
      const [claimed] = await ctx.services.repos.webhookMessages.claim(now, new Date(now.getTime() + 6000), 10);
      expect(claimed).toBeDefined();
      expect(await ctx.services.webhookDelivery.deliverDue()).toEqual([]);
      clock.advance(6000);
      expect(await ctx.services.webhookDelivery.deliverDue()).toEqual([{ ok: true, status: 204 }]);
      expect(receiver.received[0]!.headers['webhook-id']).toBe(claimed!.msg_id);
    });
  });

  it('a receiver that does not answer within the time limit is a failure', async () => {
    await withContext({ env: { ...ALLOW, WEBHOOKS_TIMEOUT_SECONDS: '1' } }, async (ctx) => {
      const tenant = await ctx.tenant();
      await addEndpoint(ctx, tenant.instanceToken, { events: ['room.closed'] });
      receiver.answer = 'hang';
      await closeARoom(ctx, tenant.instanceToken);
      const started = Date.now();
      expect(await ctx.services.webhookDelivery.deliverDue()).toEqual([{ ok: false, status: null, error: 'no answer within 1 s' }]);
      const tookMs = Date.now() - started;
      console.log(`[bench] webhook delivery to a receiver that never answers gave up after ${tookMs} ms (time limit 1 s)`);
      // The bound is the behaviour: without the time limit the delivery waits
      // for the hung receiver for ever (this test's own limit). About 1 s on a
      // working build; 15 s is far above that on a loaded machine.
      expect(tookMs).toBeLessThan(15_000);
    });
  });
});

describe('without WEBHOOKS_ALLOW_PRIVATE_NETWORKS', OWN_APP, () => {
  it('refuses at delivery a target that resolves to an internal address (an endpoint whose name moved inside)', async () => {
    await withContext({}, async (ctx) => {
      const tenant = await ctx.tenant();
      // Created while the name pointed outside; now it resolves to loopback (IPv4-mapped IPv6 too).
      for (const url of [receiver.url, receiver.url.replace('127.0.0.1', '[::ffff:127.0.0.1]'), receiver.url.replace('127.0.0.1', 'localhost')]) {
        await ctx.services.repos.webhookEndpoints.insert({
          id: crypto.randomUUID(),
          tenant_id: tenant.id,
          url,
          events: ['room.closed'],
          description: null,
          secret: 'whsec_' + Buffer.alloc(24, 1).toString('base64'),
          created_at: new Date(),
          failing_since: null,
          disabled_at: null,
          disabled_reason: null,
        });
      }
      await closeARoom(ctx, tenant.instanceToken);
      const outcomes = await ctx.services.webhookDelivery.deliverDue();
      expect(outcomes).toHaveLength(3);
      for (const outcome of outcomes) expect(outcome).toEqual({ ok: false, status: null, error: expect.stringMatching(/^refused: .*internal/) });
      expect(receiver.received).toHaveLength(0);
      const { rows } = await sql<{ last_error: string }>`select last_error from webhook_messages`.execute(ctx.services.database.db);
      expect(rows.every((r) => r.last_error.startsWith('refused'))).toBe(true);
    });
  });
});

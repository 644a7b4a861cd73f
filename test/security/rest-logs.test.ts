// Secrets never reach a log line, REST side (docs/security.md §6):
// a full scenario through the REST and admin APIs at LOG_LEVEL=trace, errors
// of every kind included (401, 403, 404 on a path made of a host token, 400 on
// a body full of tokens, 409, 412, 422, 429, and a database error quoting a
// token), then every captured line is searched for every API token, the admin
// token, every room, host and guest token and every join URL, and every
// webhook secret and the secret in a webhook URL (with deliveries that fail). Once in process,
// once against a real server process (its whole output). The join side (pages,
// WebSocket) has its own scan in ws-logs.test.ts.
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestContext, roomBody, type TestContext } from '../helpers/app.js';
import { testDb } from '../helpers/database.js';
import { ADMIN_TOKEN as PROCESS_ADMIN_TOKEN, serverDatabase, startServerProcess, stopServerProcess, waitForExit, type ServerProcess } from '../helpers/server-process.js';
import { eventually } from '../helpers/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

type Send = (method: string, url: string, options?: { token?: string; authorization?: string; body?: unknown; raw?: string; headers?: Record<string, string> }) => Promise<{ status: number; json: () => any; headers: Record<string, string> }>;

/**
 * The scenario, over any transport. Returns every secret it saw, to look for
 * in the logs afterwards.
 */
async function scenario(send: Send, adminToken: string, hookUrl: string): Promise<{ secrets: Set<string>; requests: number }> {
  const secrets = new Set<string>([adminToken]);
  let requests = 0;
  const call: Send = async (...args) => {
    requests++;
    return send(...args);
  };
  const admin = (method: string, url: string, body?: unknown) => call(method, url, { authorization: `Bearer ${adminToken}`, body });

  const tenant = (await admin('POST', '/admin/tenants', { name: 'Log scan' })).json();
  const org = (await admin('POST', `/admin/tenants/${tenant.id}/organizations`, { name: 'Clinic' })).json();
  await admin('PUT', `/admin/tenants/${tenant.id}/features/additional_participants`, { enabled: true });
  const instance = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, {})).json();
  const orgToken = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, { organization_id: org.id, label: 'org' })).json();
  const revoked = (await admin('POST', `/admin/tenants/${tenant.id}/tokens`, {})).json();
  await admin('DELETE', `/admin/tokens/${revoked.id}`);
  for (const t of [instance, orgToken, revoked]) secrets.add(t.token);

  const remember = (room: any) => {
    for (const value of [room.token, room.access_token, room.guest_token, room.host_join_url, room.guest_join_url]) secrets.add(value);
    for (const extra of room.additional_access_tokens ?? []) [extra.token, extra.join_url].forEach((v: string) => secrets.add(v));
    return room;
  };
  const created = await call('POST', '/api/rooms', { token: instance.token, body: roomBody({ additional_guest_count: 2 }), headers: { 'idempotency-key': 'log-scan-key' } });
  expect(created.status).toBe(201);
  const room = remember(created.json());
  await call('POST', '/api/rooms', { token: instance.token, body: roomBody({ additional_guest_count: 2 }), headers: { 'idempotency-key': 'log-scan-key' } });
  expect((await call('POST', '/api/rooms', { token: instance.token, body: roomBody({ name: 'Other' }), headers: { 'idempotency-key': 'log-scan-key' } })).status).toBe(422);
  const orgRoom = remember((await call('POST', '/api/rooms', { token: orgToken.token, body: roomBody() })).json());
  await call('GET', `/api/rooms/${room.token}`, { token: instance.token });
  await call('GET', '/api/rooms?per_page=1', { token: instance.token });
  await call('GET', `/api/rooms?per_page=1&cursor=${room.access_token}`, { token: instance.token });
  const put = await call('PUT', `/api/rooms/${room.token}`, { token: instance.token, body: roomBody({ name: room.access_token.slice(0, 40) }), headers: { 'if-match': '"1"' } });
  expect(put.status).toBe(200);
  expect((await call('PUT', `/api/rooms/${room.token}`, { token: instance.token, body: roomBody(), headers: { 'if-match': '"1"' } })).status).toBe(412);
  // Secrets where they do not belong: in paths, bodies, queries and headers.
  expect((await call('GET', `/api/rooms/${room.access_token}`, { token: instance.token })).status).toBe(404);
  expect((await call('POST', `/api/rooms/${room.guest_token}/close`, { token: instance.token })).status).toBe(404);
  expect((await call('GET', `/api/rooms/${orgRoom.token}`, { token: orgToken.token })).status).toBe(200);
  expect((await call('POST', '/api/rooms', { token: instance.token, body: { name: room.access_token, meeting_duration: instance.token, scheduled_at: room.guest_token } })).status).toBe(400);
  expect((await call('POST', '/api/rooms', { token: instance.token, raw: `{"name": "${instance.token}", "oops"` })).status).toBe(400);
  expect((await call('GET', `/api/nowhere/${room.access_token}?token=${instance.token}`, { token: instance.token })).status).toBe(404);
  expect((await call('GET', '/api/rooms', { authorization: `Bearer ${instance.token}x` })).status).toBe(401);
  expect((await call('GET', '/api/rooms', { token: revoked.token })).status).toBe(401);
  expect((await call('GET', '/api/rooms', { authorization: instance.token })).status).toBe(401);
  expect((await call('GET', '/admin/tenants', { authorization: `Bearer ${adminToken}x` })).status).toBe(401);
  expect((await call('GET', '/api/room_feedbacks', { token: orgToken.token })).status).toBe(403);
  await call('GET', '/api/room_feedbacks/summary?from=2026-01-01', { token: instance.token });
  await call('POST', `/api/rooms/${room.token}/close`, { token: instance.token });
  await call('DELETE', `/api/rooms/${orgRoom.token}`, { token: orgToken.token });
  // The key's room was deleted: 409.
  const keyed = (await call('POST', '/api/rooms', { token: orgToken.token, body: roomBody(), headers: { 'idempotency-key': 'gone' } })).json();
  await call('DELETE', `/api/rooms/${remember(keyed).token}`, { token: orgToken.token });
  expect((await call('POST', '/api/rooms', { token: orgToken.token, body: roomBody(), headers: { 'idempotency-key': 'gone' } })).status).toBe(409);
  // Webhooks: secrets in the answer, in the endpoint's URL, and in a refused body; the receiver fails every delivery.
  const urlSecret = `hook-${instance.token.slice(4, 30)}`;
  const hook = await call('POST', '/api/webhook_endpoints', { token: instance.token, body: { url: `${hookUrl}?key=${urlSecret}`, description: 'log scan' } });
  expect(hook.status).toBe(201);
  for (const value of [hook.json().secret, hook.json().secret.slice('whsec_'.length), urlSecret]) secrets.add(value);
  expect((await call('GET', '/api/webhook_endpoints', { token: instance.token })).status).toBe(200);
  expect((await call('POST', '/api/webhook_endpoints', { token: instance.token, body: { url: `ftp://${urlSecret}/`, events: [hook.json().secret] } })).status).toBe(400);
  expect((await call('POST', '/api/webhook_endpoints', { token: orgToken.token, body: { url: hookUrl } })).status).toBe(403);
  const closedForHook = remember((await call('POST', '/api/rooms', { token: instance.token, body: roomBody() })).json());
  await call('POST', `/api/rooms/${closedForHook.token}/close`, { token: instance.token });
  expect((await call('GET', `/api/rooms/${closedForHook.token}/sessions`, { token: instance.token })).status).toBe(200);
  // Until the rate limit says no.
  let status = 0;
  for (let i = 0; i < 60 && status !== 429; i++) status = (await call('GET', `/api/rooms/${room.token}`, { token: orgToken.token })).status;
  expect(status).toBe(429);
  return { secrets, requests };
}

function leaks(lines: string[], secrets: Set<string>): string[] {
  const found: string[] = [];
  for (const line of lines) {
    for (const secret of secrets) if (line.includes(secret)) found.push(`${secret.slice(0, 12)}… in ${line.slice(0, 300)}`);
    if (/Bearer\s+\S/.test(line)) found.push(`a Bearer credential in ${line.slice(0, 300)}`);
  }
  return found;
}

let ctx: TestContext | undefined;
let receiver: WebhookReceiver | undefined;
let server: ServerProcess | undefined;
let database: Awaited<ReturnType<typeof serverDatabase>> | undefined;

afterAll(async () => {
  await ctx?.close();
  await receiver?.close();
  await stopServerProcess(server);
  await database?.remove();
});

describe('no secret in any log line', () => {
  it('in process, at trace level, with a database error that quotes a token', { timeout: 60_000 }, async () => {
    receiver ??= await startWebhookReceiver();
    receiver.answer = 500;
    ctx = await createTestContext({ env: { LOG_LEVEL: 'trace', RATE_LIMIT_PER_MINUTE: '50', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' } });
    const c = ctx;
    const send: Send = async (method, url, options = {}) => {
      const authorization = options.authorization ?? (options.token ? `Bearer ${options.token}` : undefined);
      const res = await c.app.inject({
        method: method as 'GET',
        url,
        headers: { ...(authorization ? { authorization } : {}), ...(options.raw ? { 'content-type': 'application/json' } : {}), ...options.headers },
        ...(options.raw ? { payload: options.raw } : options.body !== undefined ? { payload: options.body as object } : {}),
      });
      return { status: res.statusCode, json: () => res.json(), headers: res.headers as Record<string, string> };
    };
    const { secrets, requests } = await scenario(send, ADMIN_TOKEN, receiver.url);
    expect((await c.services.webhookDelivery.deliverDue()).some((o) => !o.ok && o.status === 500)).toBe(true);

    // A database error that quotes a token (as a unique violation's detail does), thrown where a lookup runs.
    const [someSecret] = [...secrets].filter((s) => !s.startsWith('http') && !s.startsWith('prl_'));
    const original = c.services.rooms.get;
    c.services.rooms.get = async () => {
      throw Object.assign(new Error(`duplicate key value violates unique constraint "rooms_access_token_key": ${someSecret}`), {
        severity: 'ERROR',
        code: '23505',
        detail: `Key (access_token)=(${someSecret}) already exists.`,
        where: `SQL statement with $1 = '${someSecret}'`,
      });
    };
    const broken = await send('GET', `/api/rooms/${'C'.repeat(22)}`, { token: [...secrets].find((s) => s.startsWith('prl_'))! });
    c.services.rooms.get = original;
    expect(broken.status).toBe(500);

    const lines = c.logs.flatMap((chunk) => chunk.split('\n')).filter(Boolean);
    // The scan means something: every request left its line, and the database error was logged.
    expect(lines.filter((l) => l.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(requests);
    const error = lines.find((l) => l.includes('"unexpected error"') && l.includes('23505'));
    expect(error).toBeDefined();
    // Logged by the request's own logger (made on first use, http/logging.ts): its id ties it to the request's line.
    const { reqId } = JSON.parse(error!) as { reqId?: string };
    expect(reqId).toEqual(expect.any(String));
    expect(lines.some((l) => l.includes('"msg":"request"') && l.includes(`"reqId":${JSON.stringify(reqId)}`) && l.includes('"status":500'))).toBe(true);
    expect(leaks(lines, secrets)).toEqual([]);
  });

  it(`in a real server process (${testDb}), its whole output`, { timeout: 180_000 }, async () => {
    database = await serverDatabase();
    receiver ??= await startWebhookReceiver();
    receiver.answer = 500;
    receiver.received.length = 0;
    server = await startServerProcess({ ...database.env, LOG_LEVEL: 'trace', RATE_LIMIT_PER_MINUTE: '50', WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' });
    const base = server.url;
    const send: Send = async (method, url, options = {}) => {
      const authorization = options.authorization ?? (options.token ? `Bearer ${options.token}` : undefined);
      const body = options.raw ?? (options.body !== undefined ? JSON.stringify(options.body) : undefined);
      const res = await fetch(base + url, {
        method,
        headers: { ...(authorization ? { authorization } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
        body,
      });
      const text = await res.text();
      return { status: res.status, json: () => JSON.parse(text), headers: Object.fromEntries(res.headers) };
    };
    const { secrets, requests } = await scenario(send, PROCESS_ADMIN_TOKEN, receiver.url);
    // The node's own job delivered (and failed) at least once before it stops.
    await eventually(() => receiver!.received.length > 0, 20_000, 'a webhook delivery');
    server.child.kill('SIGTERM');
    expect((await waitForExit(server, 20_000)).code).toBe(0);

    // The first start prints the default tenant's token once, on purpose; that block aside, nothing.
    expect(server.firstToken).toMatch(/^prl_/);
    const announced = server.output.filter((line) => line.includes(server!.firstToken!));
    expect(announced).toHaveLength(2);
    expect(announced.every((line) => /^\s+prl_|^Try: curl/.test(line))).toBe(true);
    const lines = server.output.filter((line) => !announced.includes(line));
    expect(lines.filter((l) => l.includes('"msg":"request"')).length).toBeGreaterThanOrEqual(requests);
    expect(leaks(lines, new Set([...secrets, server.firstToken!]))).toEqual([]);
  });
});

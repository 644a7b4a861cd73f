// The typed client (src/client) against a really listening Parley: typed
// calls, real HTTP over a socket, each answer checked as an integrator would.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createParleyClient, pageOf, queryOf, type ParleyClient, type RoomInput } from '../../src/client/index.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';

let server: RealtimeServer;
let parley: ParleyClient;
let baseUrl: string;
/** Every answer the clients got: its operation (path template and method) and status. */
const answers: { path: string; method: string; status: number }[] = [];

const recordAnswers = (client: ParleyClient) =>
  client.use({
    onResponse({ request, response, schemaPath }) {
      answers.push({ path: schemaPath, method: request.method.toLowerCase(), status: response.status });
    },
  });

beforeAll(async () => {
  server = await startRealtimeServer();
  baseUrl = `http://127.0.0.1:${(server.app.server.address() as { port: number }).port}`;
  parley = createParleyClient({ baseUrl, token: server.token });
  recordAnswers(parley);
});
afterAll(() => server.close());

const input: RoomInput = { name: 'Typed client', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z' };

// Never called: it only has to compile, or not. The types are the contract.
export function typeChecks(client: ParleyClient) {
  // @ts-expect-error meeting_duration is an integer, not a string
  void client.POST('/api/rooms', { body: { ...input, meeting_duration: '30' } });
  // @ts-expect-error the path names a room token
  void client.GET('/api/rooms/{token}', { params: { path: {} } });
  // @ts-expect-error no such path
  void client.GET('/api/room');
}

describe('the typed client against a listening server', () => {
  it('creates, gets, updates, lists with pagination headers, closes and deletes a room', async () => {
    const created = await parley.POST('/api/rooms', { body: input, headers: { 'Idempotency-Key': 'client-test-1' } });
    expect(created.response.status).toBe(201);
    const room = created.data!;
    expect(room.name).toBe('Typed client');
    expect(created.response.headers.get('Location')).toBe(`http://parley.test/api/rooms/${room.token}`);
    const etag = created.response.headers.get('ETag')!;
    expect(etag).toMatch(/^"\d+"$/);

    const got = await parley.GET('/api/rooms/{token}', { params: { path: { token: room.token } } });
    expect(got.data?.guest_join_url).toBe(room.guest_join_url);
    expect(got.response.headers.get('ETag')).toBe(etag);

    const updated = await parley.PUT('/api/rooms/{token}', {
      params: { path: { token: room.token }, header: { 'If-Match': etag } },
      body: { ...input, name: 'Typed client, renamed', meeting_duration: 45 },
    });
    expect(updated.response.status).toBe(200);
    expect(updated.data).toMatchObject({ name: 'Typed client, renamed', meeting_duration: 45 });
    // The old ETag is stale now: the error is the documented {error} of 412.
    const stale = await parley.PUT('/api/rooms/{token}', { params: { path: { token: room.token }, header: { 'If-Match': etag } }, body: input });
    expect(stale.response.status).toBe(412);
    expect(stale.error).toEqual({ error: expect.any(String) });

    await parley.POST('/api/rooms', { body: { ...input, name: 'Second' } });
    await parley.POST('/api/rooms', { body: { ...input, name: 'Third' } });
    const first = await parley.GET('/api/rooms', { params: { query: { per_page: 2 } } });
    expect(first.data?.rooms).toHaveLength(2);
    const page = pageOf(first.response);
    expect(page).toMatchObject({ page: 1, perPage: 2, totalPages: 2, totalCount: 3 });
    expect(page.links.next).toMatch(/^http:\/\/parley\.test\/api\/rooms\?/);
    const second = await parley.GET('/api/rooms', { params: { query: queryOf(page.links.next!) } });
    expect(pageOf(second.response)).toMatchObject({ page: 2, totalCount: 3 });
    const seen = [...first.data!.rooms, ...second.data!.rooms].map((r) => r.token);
    expect(new Set(seen).size).toBe(3);
    expect(seen).toContain(room.token);

    const closed = await parley.POST('/api/rooms/{token}/close', { params: { path: { token: room.token } } });
    expect(closed.response.status).toBe(204);
    expect((await parley.GET('/api/rooms/{token}', { params: { path: { token: room.token } } })).data?.status).toBe('closed');

    const deleted = await parley.DELETE('/api/rooms/{token}', { params: { path: { token: room.token } } });
    expect(deleted.response.status).toBe(204);
    const gone = await parley.GET('/api/rooms/{token}', { params: { path: { token: room.token } } });
    expect(gone.response.status).toBe(404);
    expect(gone.error).toEqual({ error: 'Room not found' });
  });

  it('a 400 comes back as the typed array of field errors', async () => {
    const res = await parley.POST('/api/rooms', { body: { ...input, meeting_duration: 0 } });
    expect(res.response.status).toBe(400);
    expect(res.error).toEqual([expect.objectContaining({ attribute: 'meeting_duration', type: expect.any(String), message: expect.any(String) })]);
  });

  it('creates a webhook endpoint (secret shown once) and lists it without the secret', async () => {
    const created = await parley.POST('/api/webhook_endpoints', { body: { url: 'https://hooks.example.com/parley', events: ['room.ended'] } });
    expect(created.response.status).toBe(201);
    expect(created.data?.secret).toMatch(/^whsec_/);
    expect(created.response.headers.get('Location')).toBe(`http://parley.test/api/webhook_endpoints/${created.data!.id}`);
    const listed = await parley.GET('/api/webhook_endpoints');
    const endpoint = listed.data?.webhook_endpoints.find((e) => e.id === created.data!.id);
    expect(endpoint).toMatchObject({ url: 'https://hooks.example.com/parley', events: ['room.ended'], status: 'enabled' });
    expect(endpoint).not.toHaveProperty('secret');
  });

  it('reads the participant sessions of a room someone joined over the WebSocket', async () => {
    const room = (await parley.POST('/api/rooms', { body: input })).data!;
    const host = await server.connect();
    await host.join(room.access_token, 'Dr. Ada');
    const res = await parley.GET('/api/rooms/{token}/sessions', { params: { path: { token: room.token } } });
    expect(res.response.status).toBe(200);
    expect(res.data?.sessions).toEqual([expect.objectContaining({ role: 'host', display_name: 'Dr. Ada', left_at: null })]);
  });

  it('a wrong token is the typed 401 with WWW-Authenticate', async () => {
    const stranger = createParleyClient({ baseUrl, token: 'not-a-token' });
    recordAnswers(stranger);
    const res = await stranger.GET('/api/rooms');
    expect(res.response.status).toBe(401);
    expect(res.response.headers.get('WWW-Authenticate')).toBe('Bearer');
    expect(res.error).toEqual({ error: expect.any(String) });
  });

  // Runs last: the document the types came from names every status the server gave in the tests above.
  it('every status the server answered is documented on its operation', async () => {
    const doc = (await server.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200, 201, 204, 400, 401, 404, 412]));
    for (const { path, method, status } of answers) {
      expect(Object.keys(doc.paths[path][method].responses), `${method} ${path}`).toContain(String(status));
    }
  });
});

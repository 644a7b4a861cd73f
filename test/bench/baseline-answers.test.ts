// The API benchmark's baselines must answer with exactly Parley's room: the
// same fields, of the same types, or the comparison measures a different
// answer. Both servers run as the benchmark runs them (bench/support/processes.ts):
// baseline-server.ts on a database migrated by Parley's own migrations, the
// independent one on a database where it makes its own minimal tables. Their
// room answers are checked against the product's response schema
// (src/http/schemas.ts). PostgreSQL set only: the baselines need PostgreSQL.
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBaseline, startIndependentServer, type ServerProcess } from '../../bench/support/processes.js';
import { loadConfig } from '../../src/config.js';
import { presentRoom } from '../../src/http/routes/rooms.presenter.js';
import { RoomSchema } from '../../src/http/schemas.js';
import { createServices, type Services } from '../../src/services.js';
import { httpJson } from '../helpers/api.js';
import { createPostgresDatabase, openTestDatabase, testDb } from '../helpers/database.js';

const PUBLIC_URL = 'http://parley.test';
const StrictRoom = Type.Object(RoomSchema.properties, { additionalProperties: false });

/** Why a room answer is not one Parley could give (a field it lacks, one it does not have, a wrong type), or null. */
function roomProblem(room: unknown): string | null {
  const errors = [...Value.Errors(StrictRoom, room)].map((e) => `${e.instancePath || '/'} ${e.message}`);
  return errors.length > 0 ? errors.join('; ') : null;
}

const CREATE = {
  name: 'Consultation',
  meeting_duration: 30,
  scheduled_at: '2030-03-10T14:00:00Z',
  guest_display_name: 'Patient',
  host_return_url: 'https://example.org/host',
};
const UPDATE = { name: 'Follow-up', meeting_duration: 45, scheduled_at: '2030-03-11T09:30:00Z', host_display_name: 'Dr. Example', enable_chat: false };

/** POST, GET and PUT of a room through `server`: every answer in Parley's shape. */
async function expectParleyRooms(server: ServerProcess, token: string): Promise<void> {
  const created = await httpJson(server.url, token, 'POST', '/api/rooms', CREATE);
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  expect(roomProblem(created.json)).toBeNull();
  const path = `/api/rooms/${created.json.token}`;
  const read = await httpJson(server.url, token, 'GET', path);
  expect(read.status).toBe(200);
  expect(roomProblem(read.json)).toBeNull();
  expect(read.json).toEqual(created.json);
  const updated = await httpJson(server.url, token, 'PUT', path, UPDATE);
  expect(updated.status).toBe(200);
  expect(roomProblem(updated.json)).toBeNull();
  expect(updated.json).toMatchObject({ name: 'Follow-up', meeting_duration: 45, host_display_name: 'Dr. Example', enable_chat: false });
}

describe.runIf(testDb === 'postgres')('the benchmark baselines answer with Parley’s room', () => {
  const stops: (() => Promise<void>)[] = [];
  let services: Services;
  let databaseUrl: string;
  let instanceToken: string;

  beforeAll(async () => {
    const database = await openTestDatabase();
    stops.push(() => database.close());
    databaseUrl = database.url!;
    services = createServices({ database, config: loadConfig({ PUBLIC_URL, PARLEY_ADMIN_TOKEN: 'test-admin-token-0123456789' }) });
    const tenant = await services.tenants.createTenant({ name: 'Bench' });
    await services.tenants.setTenantFeature(tenant.id, 'additional_participants', true);
    instanceToken = (await services.tenants.issueToken(tenant.id, {})).token;
  });

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  it('the strict schema refuses a field Parley does not have, and a missing one', () => {
    const room = presentRoom(
      {
        row: {
          name: 'x', token: 't', status: 'active', access_token: 'a', guest_token: 'g', host_display_name: null, guest_display_name: null,
          enable_chat: true, enable_screenshare: true, enable_invites: true, enable_audio_indicator: true, enable_waiting_room: false,
          locale: null, scheduled_at: new Date(), meeting_duration: 30, return_url: 'https://example.org', host_return_url: null,
          permanent: false, enable_recording: false, doctor_id: null, created_at: new Date(), updated_at: new Date(), started_at: null, ended_at: null, closed_at: null,
        } as unknown as Parameters<typeof presentRoom>[0]['row'],
        currentParticipants: [],
        waitingParticipants: [],
        additionalTokens: [],
        showAdditionalTokens: false,
      },
      PUBLIC_URL,
    );
    expect(roomProblem(JSON.parse(JSON.stringify(room)))).toBeNull();
    expect(roomProblem({ ...room, extra: 1 })).toMatch(/extra|additional/i);
    const { enable_waiting_room: _, ...missing } = room;
    expect(roomProblem(missing)).toMatch(/enable_waiting_room/);
  });

  it('baseline-server.ts, on Parley’s migrated schema', { timeout: 60_000 }, async () => {
    const server = await startBaseline(databaseUrl, 2, PUBLIC_URL);
    stops.push(() => server.stop());
    await expectParleyRooms(server, instanceToken);

    // A room Parley made, with additional guest tokens: the same bytes as Parley's presenter gives its view.
    const principal = await services.auth.authenticate(`Bearer ${instanceToken}`);
    const view = await services.rooms.create(principal, { ...CREATE, additional_guest_count: 2 });
    const answer = await fetch(`${server.url}/api/rooms/${view.row.token}`, { headers: { authorization: `Bearer ${instanceToken}` } });
    const text = await answer.text();
    expect(roomProblem(JSON.parse(text))).toBeNull();
    expect(text).toBe(JSON.stringify(presentRoom(await services.rooms.get(principal, view.row.token), PUBLIC_URL)));
    expect(JSON.parse(text).additional_access_tokens).toHaveLength(2);

    const list = await httpJson(server.url, instanceToken, 'GET', '/api/rooms?page=1');
    expect(list.status).toBe(200);
    expect(list.json.rooms.length).toBeGreaterThan(0);
    for (const room of list.json.rooms) expect(roomProblem(room)).toBeNull();
  });

  it('independent-baseline-server.ts, on its own minimal tables', { timeout: 60_000 }, async () => {
    const { url, drop } = await createPostgresDatabase();
    stops.push(drop);
    const server = await startIndependentServer(url, 2, PUBLIC_URL);
    stops.push(() => server.stop());
    await expectParleyRooms(server, server.token);
  });
});

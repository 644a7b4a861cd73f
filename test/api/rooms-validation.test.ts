// Validation (docs/design.md#rooms) of a room body, on create and on update: every field's
// blank / type / range / length rule, all errors at once, JSON problems, 400 before 422.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom, expectError, expectFieldErrors } from '../helpers/api.js';

let ctx: TestContext;
let tenant: TestTenant;
let existing: string;

beforeAll(async () => {
  ctx = await createTestContext();
  tenant = await ctx.tenant();
  existing = (await createRoom(ctx, tenant.instanceToken)).token;
});
afterAll(() => ctx.close());

const create = (payload: unknown) => ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: payload as object });
const update = (payload: unknown) =>
  ctx.request({ method: 'PUT', url: `/api/rooms/${existing}`, token: tenant.instanceToken, payload: payload as object });

/** [field, value, expected type]; undefined = the field is left out. */
const invalid: [string, unknown, string][] = [
  ['name', undefined, 'blank'],
  ['name', null, 'blank'],
  ['name', '', 'blank'],
  ['name', '   \t ', 'blank'],
  ['name', 42, 'invalid'],
  ['name', ['a'], 'invalid'],
  ['name', 'x'.repeat(256), 'too_long'],
  ['name', '🩺'.repeat(256), 'too_long'],
  ['meeting_duration', undefined, 'blank'],
  ['meeting_duration', null, 'blank'],
  ['meeting_duration', '30', 'not_a_number'],
  ['meeting_duration', 'thirty', 'not_a_number'],
  ['meeting_duration', 1.5, 'not_an_integer'],
  ['meeting_duration', 0, 'greater_than_or_equal_to'],
  ['meeting_duration', -5, 'greater_than_or_equal_to'],
  ['meeting_duration', 1441, 'less_than_or_equal_to'],
  ['meeting_duration', 1e12, 'less_than_or_equal_to'],
  ['scheduled_at', undefined, 'blank'],
  ['scheduled_at', null, 'blank'],
  ['scheduled_at', '', 'invalid'],
  ['scheduled_at', 'tomorrow at noon', 'invalid'],
  ['scheduled_at', '2026-03-10', 'invalid'],
  ['scheduled_at', '2026-03-10T14:00:00', 'invalid'],
  ['scheduled_at', '2026-02-30T14:00:00Z', 'invalid'],
  ['scheduled_at', '2026-03-10T25:00:00Z', 'invalid'],
  ['scheduled_at', '2026-12-31T23:59:60Z', 'invalid'],
  ['scheduled_at', '0000-01-01T00:00:00Z', 'invalid'],
  ['scheduled_at', '9999-12-31T23:59:00Z', 'invalid'],
  ['scheduled_at', 1773151200000, 'invalid'],
  ['return_url', 'ftp://files.example/x', 'invalid'],
  ['return_url', 'javascript:alert(1)', 'invalid'],
  ['return_url', '/relative/path', 'invalid'],
  ['return_url', 'http://', 'invalid'],
  ['return_url', 'not a url', 'invalid'],
  ['return_url', `https://example.com/${'a'.repeat(2030)}`, 'too_long'],
  ['return_url', 12, 'invalid'],
  ['host_return_url', 'mailto:doc@example.com', 'invalid'],
  ['host_return_url', '', 'invalid'],
  ['host_display_name', 'x'.repeat(101), 'too_long'],
  ['host_display_name', 7, 'invalid'],
  ['guest_display_name', 'y'.repeat(101), 'too_long'],
  ['guest_display_name', { first: 'a' }, 'invalid'],
  ['enable_chat', 'true', 'inclusion'],
  ['enable_screenshare', 1, 'inclusion'],
  ['enable_invites', 'false', 'inclusion'],
  ['enable_audio_indicator', 0, 'inclusion'],
  ['enable_waiting_room', 'yes', 'inclusion'],
  ['locale', 'xx', 'inclusion'],
  ['locale', 'EN', 'inclusion'],
  ['locale', 42, 'invalid'],
  ['permanent', 'yes', 'inclusion'],
  ['additional_guest_count', -1, 'greater_than_or_equal_to'],
  ['additional_guest_count', 21, 'less_than_or_equal_to'],
  ['additional_guest_count', 2.5, 'not_an_integer'],
  ['additional_guest_count', '2', 'not_a_number'],
  ['doctor_id', 'dr-who', 'invalid'],
  ['doctor_id', 'urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'invalid'],
  ['doctor_id', 42, 'invalid'],
];

function bodyWith(field: string, value: unknown): Record<string, unknown> {
  const body = roomBody();
  if (value === undefined) delete body[field];
  else body[field] = value;
  return body;
}

describe.each([
  ['POST /api/rooms', create],
  ['PUT /api/rooms/{token}', update],
])('%s', (_name, send) => {
  it.each(invalid)('%s = %j is 400 %s', async (field, value, type) => {
    expectFieldErrors(await send(bodyWith(field, value)), { [field]: type });
  });

  it('reports every failing field at once', async () => {
    const res = await send({ name: ' ', meeting_duration: 0, scheduled_at: 'soon', return_url: 'ftp://x', enable_chat: 'no', additional_guest_count: 99 });
    expectFieldErrors(res, {
      name: 'blank',
      meeting_duration: 'greater_than_or_equal_to',
      scheduled_at: 'invalid',
      return_url: 'invalid',
      enable_chat: 'inclusion',
      additional_guest_count: 'less_than_or_equal_to',
    });
  });

  it('reports all three required fields of an empty object', async () => {
    expectFieldErrors(await send({}), { name: 'blank', meeting_duration: 'blank', scheduled_at: 'blank' });
  });
});

describe('limits that pass', () => {
  it.each([
    ['name', 'x'.repeat(255)],
    ['name', '🩺'.repeat(255)],
    ['name', `  ${'n'.repeat(255)}  `],
    ['meeting_duration', 1],
    ['meeting_duration', 1440],
    ['meeting_duration', 30.0],
    ['host_display_name', 'h'.repeat(100)],
    ['guest_display_name', 'g'.repeat(100)],
    ['return_url', `https://example.com/${'a'.repeat(2028)}`],
    ['return_url', 'HTTP://EXAMPLE.COM/Path?q=1#frag'],
    ['host_return_url', 'http://localhost:8080/x'],
    ['scheduled_at', '1900-01-01T00:00:00Z'],
    ['scheduled_at', '9998-12-31T00:00:00+00:00'],
    ['scheduled_at', '2026-03-10t14:00:00z'],
    ['additional_guest_count', 0],
    ['permanent', false],
  ])('%s = %j is accepted', async (field, value) => {
    const res = await create(bodyWith(field, value));
    expect(res.statusCode, res.body).toBe(201);
  });
});

describe('the body itself', () => {
  const raw = (payload: string, contentType = 'application/json') =>
    ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload, headers: { 'content-type': contentType } });

  it.each([
    ['{"name": "x",', 'truncated'],
    ["{'name': 'x'}", 'single quotes'],
    ['{"name": "x"} trailing', 'trailing text'],
    ['{name: "x"}', 'bare key'],
    ['\u00ff\u00fe{', 'binary'],
  ])('malformed JSON (%s) is 400 on body', async (payload) => {
    expectFieldErrors(await raw(payload), { body: 'invalid' });
  });

  it('an empty body is 400 body blank', async () => {
    expectFieldErrors(await raw(''), { body: 'blank' });
    expectFieldErrors(await raw('null'), { body: 'blank' });
  });

  it.each([['[]'], ['"room"'], ['42'], ['true']])('a JSON %s instead of an object is 400 on body', async (payload) => {
    expectFieldErrors(await raw(payload), { body: 'invalid' });
  });

  it('a body that is not JSON is 415 {error}', async () => {
    expectError(await raw('name=x&meeting_duration=3', 'application/x-www-form-urlencoded'), 415);
    expectError(await raw('<room/>', 'application/xml'), 415);
  });

  it('charset parameters on the JSON content type are fine', async () => {
    const res = await raw(JSON.stringify(roomBody()), 'application/json; charset=utf-8');
    expect(res.statusCode).toBe(201);
  });
});

describe('400 is decided before 422', () => {
  it('permanent without the feature and a blank name is 400, not 422', async () => {
    expectFieldErrors(await create(roomBody({ name: '', permanent: true })), { name: 'blank' });
    expectFieldErrors(await update(roomBody({ meeting_duration: 0, additional_guest_count: 3 })), { meeting_duration: 'greater_than_or_equal_to' });
  });

  it('a doctor outside the scope is 400 even when a feature would also be missing', async () => {
    const res = await create(roomBody({ doctor_id: '6ba7b810-9dad-41d1-80b4-00c04fd430c8', permanent: true }));
    expectFieldErrors(res, { doctor_id: 'invalid' });
  });

  it('the same body passes validation and then gets the 422', async () => {
    expectError(await create(roomBody({ permanent: true })), 422);
  });
});

it('a rejected create stores nothing', async () => {
  const fresh = await ctx.tenant();
  await ctx.request({ method: 'POST', url: '/api/rooms', token: fresh.instanceToken, payload: roomBody({ name: '' }) });
  await ctx.request({ method: 'POST', url: '/api/rooms', token: fresh.instanceToken, payload: roomBody({ permanent: true }) });
  const list = await ctx.request({ method: 'GET', url: '/api/rooms', token: fresh.instanceToken });
  expect(list.json()).toEqual({ rooms: [] });
});

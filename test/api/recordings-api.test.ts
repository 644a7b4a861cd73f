// The recordings API (docs/api.md, "Recordings"; docs/design.md, "Recording
// with consent"): the feature and the room field, the list with consents, the
// download whole and by Range (bytes compared), delete (the file gone from
// disk), the audit list, the scope rules, and a room's deletion taking its files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRoom, expectError, expectUnauthorized } from '../helpers/api.js';
import { createTestContext, manualClock, type TestContext, type TestTenant } from '../helpers/app.js';
import { readyRecording, startRecording } from '../helpers/recordings.js';

const clock = manualClock();
let ctx: TestContext;
let dir: string;
let tenant: TestTenant;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-recordings-api-'));
  ctx = await createTestContext({ clock, env: { RECORDINGS_DIR: dir } });
  tenant = await ctx.tenant();
  await tenant.setFeature('recording', true);
});
afterAll(async () => {
  await ctx.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const get = (url: string, token: string | undefined, headers: Record<string, string> = {}) => ctx.request({ method: 'GET', url, token, headers });

describe('feature recording and enable_recording', () => {
  it('is 422 {error} without the feature, on create and update; off is always allowed; on with the feature', async () => {
    const other = await ctx.tenant();
    expect(expectError(await ctx.request({ method: 'POST', url: '/api/rooms', token: other.instanceToken, payload: { name: 'A', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z', enable_recording: true } }), 422)).toBe(
      'Recording is not enabled (feature recording)',
    );
    const room = await createRoom(ctx, other.instanceToken, { enable_recording: false });
    expect(room.enable_recording).toBe(false);
    const put = await ctx.request({ method: 'PUT', url: `/api/rooms/${room.token}`, token: other.instanceToken, payload: { name: 'A', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z', enable_recording: true } });
    expectError(put, 422);
    expect((await createRoom(ctx, tenant.instanceToken, { enable_recording: true })).enable_recording).toBe(true);
    expect((await createRoom(ctx, tenant.instanceToken)).enable_recording).toBe(false);
  });
});

describe('list, download, audit, delete', () => {
  it("lists a room's recordings with their consents and status", async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { enable_recording: true });
    expect((await get(`/api/rooms/${room.token}/recordings`, tenant.instanceToken)).json()).toEqual({ recordings: [] });
    const t0 = clock.now();
    const ready = await readyRecording(ctx, room.token);
    clock.advance(60_000); // oldest first: a later start
    const inProgress = await startRecording(ctx, room.token);
    const res = await get(`/api/rooms/${room.token}/recordings`, tenant.instanceToken);
    expect(res.statusCode, res.body).toBe(200);
    const { recordings } = res.json() as { recordings: Record<string, unknown>[] };
    expect(recordings.map((r) => [r.id, r.status])).toEqual([
      [ready.id, 'ready'],
      [inProgress.id, 'recording'],
    ]);
    expect(recordings[0]).toEqual({
      id: ready.id,
      status: 'ready',
      started_at: t0.toISOString(),
      ended_at: t0.toISOString(),
      duration_seconds: 12.5,
      size_bytes: ready.bytes.length,
      content_type: 'video/webm',
      started_by: 'Dr. Who',
      consents: [
        { display_name: 'Dr. Who', role: 'host', accepted_at: t0.toISOString() },
        { display_name: 'Ann', role: 'guest', accepted_at: new Date(t0.getTime() + 1000).toISOString() },
      ],
    });
    expect(recordings[1]).toMatchObject({ status: 'recording', ended_at: null, duration_seconds: null, size_bytes: null, content_type: null });
    await ctx.services.recordings.stop(inProgress.id);
  });

  it('serves the file whole and by a single Range (206, Content-Range), 416 past the end, with the bytes on disk', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { enable_recording: true });
    const { id, bytes } = await readyRecording(ctx, room.token);
    const whole = await get(`/api/recordings/${id}/file`, tenant.instanceToken);
    expect(whole.statusCode).toBe(200);
    expect(whole.headers['content-type']).toBe('video/webm');
    expect(whole.headers['accept-ranges']).toBe('bytes');
    expect(Number(whole.headers['content-length'])).toBe(bytes.length);
    expect(whole.rawPayload.equals(bytes)).toBe(true);

    const part = await get(`/api/recordings/${id}/file`, tenant.instanceToken, { range: 'bytes=1000-1999' });
    expect(part.statusCode).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 1000-1999/${bytes.length}`);
    expect(part.rawPayload.equals(bytes.subarray(1000, 2000))).toBe(true);

    const open = await get(`/api/recordings/${id}/file`, tenant.instanceToken, { range: `bytes=${bytes.length - 10}-` });
    expect(open.statusCode).toBe(206);
    expect(open.rawPayload.equals(bytes.subarray(bytes.length - 10))).toBe(true);
    const suffix = await get(`/api/recordings/${id}/file`, tenant.instanceToken, { range: 'bytes=-500' });
    expect(suffix.headers['content-range']).toBe(`bytes ${bytes.length - 500}-${bytes.length - 1}/${bytes.length}`);
    expect(suffix.rawPayload.equals(bytes.subarray(bytes.length - 500))).toBe(true);

    const past = await get(`/api/recordings/${id}/file`, tenant.instanceToken, { range: `bytes=${bytes.length}-` });
    expectError(past, 416);
    expect(past.headers['content-range']).toBe(`bytes */${bytes.length}`);
    // Several ranges: the whole file (a server may ignore Range).
    const several = await get(`/api/recordings/${id}/file`, tenant.instanceToken, { range: 'bytes=0-1,5-9' });
    expect(several.statusCode).toBe(200);
    expect(several.rawPayload.equals(bytes)).toBe(true);

    // The headers the OpenAPI document names on each answer are the ones sent.
    const operation = (await get('/api/openapi.json', undefined)).json().paths['/api/recordings/{id}/file'].get;
    for (const [status, res] of [['200', whole], ['206', part], ['416', past]] as const) {
      const documented = Object.keys(operation.responses[status].headers ?? {});
      expect(documented.length, status).toBeGreaterThan(1);
      for (const name of documented) expect(res.headers[name.toLowerCase()], `${status} ${name}`).toBeDefined();
    }
  });

  it('is 409 while a recording is not ready; 404 for an unknown or malformed id', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { enable_recording: true });
    const active = await startRecording(ctx, room.token);
    expect(expectError(await get(`/api/recordings/${active.id}/file`, tenant.instanceToken), 409)).toMatch(/not ready \(status recording\)/);
    expectError(await ctx.request({ method: 'DELETE', url: `/api/recordings/${active.id}`, token: tenant.instanceToken }), 409);
    await ctx.services.recordings.stop(active.id);
    expectError(await get('/api/recordings/6f1d0c2a-3b4e-4f5a-8b9c-0d1e2f3a4b5c/file', tenant.instanceToken), 404);
    expectError(await get('/api/recordings/not-an-id/file', tenant.instanceToken), 404);
    expectError(await get('/api/recordings/../../etc/passwd/audit', tenant.instanceToken), 404);
  });

  it('deletes the recording and its directory from disk (204), and audits each download and the deletion with the token', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { enable_recording: true });
    const { id } = await readyRecording(ctx, room.token);
    const labelled = await ctx.services.tenants.issueToken(tenant.id, { label: 'Archive robot' });
    expect((await get(`/api/recordings/${id}/audit`, tenant.instanceToken)).json()).toEqual({ audit: [] });
    const downloadAt = clock.now().toISOString();
    expect((await get(`/api/recordings/${id}/file`, labelled.token, { range: 'bytes=0-9' })).statusCode).toBe(206);
    clock.advance(60_000);
    const deleteAt = clock.now().toISOString();
    const deleted = await ctx.request({ method: 'DELETE', url: `/api/recordings/${id}`, token: tenant.instanceToken });
    expect(deleted.statusCode, deleted.body).toBe(204);
    expect(fs.existsSync(path.join(dir, id))).toBe(false);
    expectError(await get(`/api/recordings/${id}/file`, tenant.instanceToken), 404);
    expectError(await ctx.request({ method: 'DELETE', url: `/api/recordings/${id}`, token: tenant.instanceToken }), 404);
    expect((await get(`/api/rooms/${room.token}/recordings`, tenant.instanceToken)).json()).toEqual({ recordings: [] });

    const audit = await get(`/api/recordings/${id}/audit`, tenant.instanceToken);
    expect(audit.statusCode, audit.body).toBe(200);
    const instanceTokenId = (await ctx.services.auth.authenticate(`Bearer ${tenant.instanceToken}`)).tokenId;
    expect(audit.json()).toEqual({
      audit: [
        { action: 'download', at: downloadAt, token_id: labelled.id, token_label: 'Archive robot' },
        { action: 'delete', at: deleteAt, token_id: instanceTokenId, token_label: null },
      ],
    });
  });
});

describe('scope', () => {
  it('is 404 for another tenant and for another organization, as rooms are; 401 without a token', async () => {
    const orgA = await tenant.organization();
    const orgB = await tenant.organization();
    await ctx.services.tenants.setOrganizationFeature(orgA.id, 'recording', true);
    const room = await createRoom(ctx, orgA.token, { enable_recording: true });
    const { id } = await readyRecording(ctx, room.token);
    const stranger = await ctx.tenant();
    const urls = [`/api/rooms/${room.token}/recordings`, `/api/recordings/${id}/file`, `/api/recordings/${id}/audit`];
    for (const token of [stranger.instanceToken, orgB.token]) {
      for (const url of urls) expectError(await get(url, token), 404);
      expectError(await ctx.request({ method: 'DELETE', url: `/api/recordings/${id}`, token }), 404);
    }
    for (const url of urls) expectUnauthorized(await get(url, undefined));
    expectUnauthorized(await ctx.request({ method: 'DELETE', url: `/api/recordings/${id}` }));
    // The organization's own token and its tenant's Instance token reach it.
    for (const token of [orgA.token, tenant.instanceToken]) {
      for (const url of urls) expect((await get(url, token)).statusCode).toBe(200);
    }
    expect(fs.existsSync(path.join(dir, id, 'recording.webm'))).toBe(true);
  });
});

describe("a room's deletion", () => {
  it('deletes its recordings and their files (DELETE /api/rooms/{token})', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { enable_recording: true });
    const ready = await readyRecording(ctx, room.token);
    const failed = await startRecording(ctx, room.token, { raw: false });
    await ctx.services.recordings.stop(failed.id);
    expect(fs.existsSync(path.join(dir, ready.id, 'recording.webm'))).toBe(true);
    expect(fs.existsSync(path.join(dir, failed.id))).toBe(true);
    expect((await ctx.request({ method: 'DELETE', url: `/api/rooms/${room.token}`, token: tenant.instanceToken })).statusCode).toBe(204);
    expect(fs.existsSync(path.join(dir, ready.id))).toBe(false);
    expect(fs.existsSync(path.join(dir, failed.id))).toBe(false);
    expectError(await get(`/api/recordings/${ready.id}/file`, tenant.instanceToken), 404);
  });
});

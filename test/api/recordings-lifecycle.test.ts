// A recording's life after the call (docs/design.md, "Recording with
// consent"), on the manual clock with a fake composer: processing claimed with
// a lease (a node killed mid-processing lets another take it), a recording
// whose node died stopped (a shorter ready, or failed with nothing), retention,
// the files of deleted rooms and orphan directories, and the webhooks sent.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS, PROCESSING_LEASE_SECONDS, RECORDING_LEASE_SECONDS } from '../../src/domain/recordings/recording-jobs.js';
import { nodeJobs } from '../../src/jobs.js';
import { createRoom } from '../helpers/api.js';
import { createTestContext, manualClock, type TestContext, type TestTenant } from '../helpers/app.js';
import { fakeComposer, readyRecording, startRecording } from '../helpers/recordings.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

const clock = manualClock();
const DAY = 86400_000;
let ctx: TestContext;
let dir: string;
let tenant: TestTenant;
let receiver: WebhookReceiver;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-recordings-life-'));
  receiver = await startWebhookReceiver();
  ctx = await createTestContext({ clock, env: { RECORDINGS_DIR: dir, WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', RECORDING_RETENTION_DAYS: '30' } });
  tenant = await ctx.tenant();
  await tenant.setFeature('recording', true);
});
afterAll(async () => {
  await ctx.close();
  await receiver.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const statusOf = async (id: string) => (await ctx.services.repos.recordings.find(id))?.status ?? 'gone';
const room = () => createRoom(ctx, tenant.instanceToken, { enable_recording: true });

describe('a recording whose node died (its lease lapsed)', () => {
  it('is stopped with what was recorded: processing, then a ready file ending at the last renewal; the raw files removed', async () => {
    const { token } = await room();
    const active = await startRecording(ctx, token);
    clock.advance(10_000);
    await ctx.services.recordings.renew(active.id);
    const lastRenewal = clock.now();
    clock.advance((RECORDING_LEASE_SECONDS - 1) * 1000);
    expect(await ctx.services.recordings.stopLapsed()).not.toContain(active.id);
    clock.advance(2000);
    expect(await ctx.services.recordings.stopLapsed()).toContain(active.id);
    const row = await ctx.services.repos.recordings.find(active.id);
    expect(row).toMatchObject({ status: 'processing', ended_at: lastRenewal });
    expect(await ctx.services.recordings.active(active.roomId)).toBeNull();
    const composer = fakeComposer({ durationSeconds: 9.5 });
    expect(await ctx.services.recordings.processDue(composer)).toContain(active.id);
    expect(composer.calls).toContain(active.rawDir);
    expect(await ctx.services.repos.recordings.find(active.id)).toMatchObject({ status: 'ready', duration_seconds: 9.5, size_bytes: 300_000, content_type: 'video/webm' });
    expect(fs.existsSync(active.rawDir)).toBe(false);
    expect(fs.statSync(path.join(dir, active.id, 'recording.webm')).size).toBe(300_000);
  });

  it('is failed when nothing was recorded', async () => {
    const { token } = await room();
    const active = await startRecording(ctx, token, { raw: false });
    clock.advance((RECORDING_LEASE_SECONDS + 1) * 1000);
    await ctx.services.recordings.stopLapsed();
    expect(await statusOf(active.id)).toBe('failed');
  });
});

describe('processing', () => {
  it('is failed when the composer fails, with its error kept', async () => {
    const { token } = await room();
    const active = await startRecording(ctx, token);
    await ctx.services.recordings.stop(active.id);
    await ctx.services.recordings.processDue(fakeComposer({ fails: 'janus-pp-rec exited with 1' }));
    expect(await ctx.services.repos.recordings.find(active.id)).toMatchObject({ status: 'failed', error: 'janus-pp-rec exited with 1' });
  });

  it('claimed by a node that was killed is taken again once its lease lapsed, and given up after the attempts', async () => {
    const { token } = await room();
    const active = await startRecording(ctx, token);
    await ctx.services.recordings.stop(active.id);
    // Another node claims it and dies composing it: its lease holds, nobody else takes it meanwhile.
    const claimed = await ctx.services.repos.recordings.claimProcessing(clock.now(), new Date(clock.now().getTime() + PROCESSING_LEASE_SECONDS * 1000));
    expect(claimed?.id).toBe(active.id);
    const composer = fakeComposer();
    expect(await ctx.services.recordings.processDue(composer)).not.toContain(active.id);
    expect(await statusOf(active.id)).toBe('processing');
    clock.advance((PROCESSING_LEASE_SECONDS + 1) * 1000);
    expect(await ctx.services.recordings.processDue(composer)).toContain(active.id);
    expect(await statusOf(active.id)).toBe('ready');

    // One whose every attempt kills its node.
    const doomed = await startRecording(ctx, token);
    await ctx.services.recordings.stop(doomed.id);
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      expect((await ctx.services.repos.recordings.claimProcessing(clock.now(), new Date(clock.now().getTime() + 1000)))?.id).toBe(doomed.id);
      clock.advance(2000);
    }
    await ctx.services.recordings.processDue(composer);
    expect(await ctx.services.repos.recordings.find(doomed.id)).toMatchObject({ status: 'failed', error: `Processing was given up after ${MAX_ATTEMPTS} attempts` });
  });

  it('gives a composing stopped with its node back at once, not failed', async () => {
    const { token } = await room();
    const active = await startRecording(ctx, token);
    await ctx.services.recordings.stop(active.id);
    const controller = new AbortController();
    const composing = ctx.services.recordings.processDue(async ({ signal }) => {
      controller.abort();
      signal?.throwIfAborted();
      throw new Error('unreachable');
    }, controller.signal);
    await composing;
    expect(await ctx.services.repos.recordings.find(active.id)).toMatchObject({ status: 'processing', lease_until: null });
    await ctx.services.recordings.processDue(fakeComposer());
    expect(await statusOf(active.id)).toBe('ready');
  });
});

describe('storage', () => {
  it('deletes recordings (rows and files) RECORDING_RETENTION_DAYS after they started, the deletion in the audit list', async () => {
    const { token } = await room();
    const { id } = await readyRecording(ctx, token);
    clock.advance(29 * DAY);
    expect(await ctx.services.recordings.applyRetention()).not.toContain(id);
    expect(await statusOf(id)).toBe('ready');
    clock.advance(1 * DAY + 1000);
    expect(await ctx.services.recordings.applyRetention()).toContain(id);
    expect(await statusOf(id)).toBe('gone');
    expect(fs.existsSync(path.join(dir, id))).toBe(false);
    const audit = await ctx.request({ method: 'GET', url: `/api/recordings/${id}/audit`, token: tenant.instanceToken });
    expect(audit.json()).toEqual({ audit: [{ action: 'delete', at: clock.now().toISOString(), token_id: null, token_label: null }] });
  });

  it("the expired rooms' cleanup takes their recordings' files with them", async () => {
    const { token } = await createRoom(ctx, tenant.instanceToken, { enable_recording: true, scheduled_at: clock.now().toISOString() });
    const { id } = await readyRecording(ctx, token);
    clock.advance(31 * DAY);
    const cleanup = nodeJobs(ctx.services, 'api', { compose: fakeComposer() }).find((job) => job.name === 'cleanup')!;
    expect(await cleanup.run()).toContain(token);
    expect(fs.existsSync(path.join(dir, id))).toBe(false);
  });

  it('removes a directory no recording owns once it is an hour old, and keeps a fresh one (a start in flight)', async () => {
    const orphan = path.join(dir, '0b7e6c1e-6a4f-4d8e-9a51-3f1c2d4e5a6b');
    const fresh = path.join(dir, '1b7e6c1e-6a4f-4d8e-9a51-3f1c2d4e5a6b');
    fs.mkdirSync(path.join(orphan, 'raw'), { recursive: true });
    fs.writeFileSync(path.join(orphan, 'recording.webm'), 'left behind');
    fs.mkdirSync(fresh);
    const old = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(orphan, old, old);
    const { token } = await room();
    const owned = await readyRecording(ctx, token);
    fs.utimesSync(path.join(dir, owned.id), old, old);
    const removed = await ctx.services.recordings.sweepFiles();
    expect(removed).toContain('0b7e6c1e-6a4f-4d8e-9a51-3f1c2d4e5a6b');
    expect(fs.existsSync(orphan)).toBe(false);
    expect(fs.existsSync(fresh)).toBe(true);
    expect(fs.existsSync(path.join(dir, owned.id, 'recording.webm'))).toBe(true);
    fs.rmdirSync(fresh);
  });
});

describe('webhooks', () => {
  it('sends recording.started, recording.ready and recording.failed with {room_token, recording_id, ...}, signed', async () => {
    const own = await ctx.tenant();
    await own.setFeature('recording', true);
    const created = await ctx.request({
      method: 'POST',
      url: '/api/webhook_endpoints',
      token: own.instanceToken,
      payload: { url: receiver.url, events: ['recording.started', 'recording.ready', 'recording.failed'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const { token } = await createRoom(ctx, own.instanceToken, { enable_recording: true });
    const ready = await readyRecording(ctx, token);
    const failed = await startRecording(ctx, token, { raw: false });
    await ctx.services.recordings.stop(failed.id);
    receiver.received.length = 0;
    const outcomes = await ctx.services.webhookDelivery.deliverDue();
    expect(outcomes.every((o) => o.ok)).toBe(true);
    expect(receiver.types()).toEqual(['recording.started', 'recording.ready', 'recording.started', 'recording.failed']);
    // Signed as every event (the manual clock is a month ahead here, so the timestamp is too old for a verifier; webhook-delivery.test.ts checks signatures).
    expect(receiver.received.every((r) => String(r.headers['webhook-signature']).startsWith('v1,'))).toBe(true);
    const bodies = receiver.received.map((r) => JSON.parse(r.body) as { data: Record<string, unknown> });
    const started = clock.now().toISOString();
    expect(bodies[0]!.data).toEqual({ room_token: token, recording_id: ready.id, status: 'recording', started_by: 'Dr. Who', started_at: started });
    expect(bodies[1]!.data).toEqual({
      room_token: token,
      recording_id: ready.id,
      status: 'ready',
      started_by: 'Dr. Who',
      started_at: started,
      ended_at: started,
      duration_seconds: 12.5,
      size_bytes: 300_000,
      content_type: 'video/webm',
    });
    expect(bodies[3]!.data).toEqual({ room_token: token, recording_id: failed.id, status: 'failed', started_by: 'Dr. Who', started_at: started, ended_at: started, error: 'Nothing was recorded' });
  });
});

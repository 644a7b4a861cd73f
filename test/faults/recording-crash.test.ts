// kill -9 of the node that records a call (docs/design.md, "Recording with
// consent"): the recording it was renewing must end `ready` or `failed` once
// the node is started again on the same data, never stay `recording` or
// `processing`. A real server process with its local Janus (SFU=janus); the
// host records alone (nobody else to ask), and a raw file the test puts in
// the recording's directory stands for what Janus wrote before the crash, so
// the restarted node stops it, claims it and runs the real composer on it.
// Follows TEST_DB: PGlite in a temporary DATA_DIR, or a fresh PostgreSQL database.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { janusInstalled } from '../../src/config.js';
import { httpJson } from '../helpers/api.js';
import { testDb } from '../helpers/database.js';
import { ADMIN_TOKEN, adminTenantToken, serverDatabase, startServerProcess, stopServerProcess, waitForExit, type ServerProcess } from '../helpers/server-process.js';
import { waitFor } from '../helpers/wait.js';
import { Client } from '../helpers/ws-client.js';

let database: Awaited<ReturnType<typeof serverDatabase>> | undefined;
let server: ServerProcess | undefined;
let host: Client | undefined;
const recordingsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-recordings-crash-'));

afterAll(async () => {
  host?.terminate();
  await stopServerProcess(server);
  await database?.remove();
  fs.rmSync(recordingsDir, { recursive: true, force: true });
});

type Listed = { id: string; status: string; ended_at: string | null };

describe(`kill -9 mid-recording (${testDb})`, () => {
  it('leaves a recording that ends ready or failed after the restart, never stuck', { timeout: 300_000 }, async () => {
    if (!janusInstalled()) throw new Error('janus is not installed: apt-get install janus janus-tools (.ci/run installs it)');
    database = await serverDatabase();
    const env = { ...database.env, SFU: 'janus', RECORDINGS_DIR: recordingsDir, RATE_LIMIT_PER_MINUTE: '0' };
    server = await startServerProcess(env);
    const { tenantId, token } = await adminTenantToken(server.url);
    const feature = await fetch(`${server.url}/admin/tenants/${tenantId}/features/recording`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: true }),
    });
    expect(feature.status).toBe(200);
    const room = await httpJson(server.url, token, 'POST', '/api/rooms', { name: 'Recorded', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z', enable_recording: true });
    expect(room.status).toBe(201);
    const list = async () => (await httpJson(server!.url, token, 'GET', `/api/rooms/${room.json.token}/recordings`)).json.recordings as Listed[];

    host = await Client.open(`ws://127.0.0.1:${server.port}/ws`, 'http://parley.test');
    await host.join(room.json.access_token, 'Dr. Who');
    expect(await host.request({ type: 'recording-start' }, 30_000)).toMatchObject({ type: 'ack' });
    const [recording] = await waitFor(async () => {
      const listed = await list();
      return listed.length === 1 && listed[0]!.status === 'recording' ? listed : null;
    }, 30_000, 'the recording started');
    // What Janus had written when the node died (not a playable stream: the composer says so).
    const rawDir = path.join(recordingsDir, recording!.id, 'raw');
    expect(fs.statSync(rawDir).isDirectory()).toBe(true);
    fs.writeFileSync(path.join(rawDir, 'peer-camera.1-video-0.mjr'), Buffer.concat([Buffer.from('MJR00002'), Buffer.alloc(256, 7)]));

    server.child.kill('SIGKILL');
    expect((await waitForExit(server, 10_000)).signal).toBe('SIGKILL');
    host.terminate();

    const restartedAt = Date.now();
    server = await startServerProcess(env);
    // The lease (30 s) lapses, the node's job stops it (every 5 s) and the processing job composes it (every 2 s).
    const ended = await waitFor(async () => {
      const [now] = await list();
      return now && (now.status === 'ready' || now.status === 'failed') ? now : null;
    }, 120_000, 'the recording ready or failed');
    console.log(`recording ${ended.status} ${((Date.now() - restartedAt) / 1000).toFixed(1)} s after the restart`);
    expect(ended.ended_at).not.toBeNull();
    // The API still reaches it: its files can be deleted.
    expect((await httpJson(server.url, token, 'DELETE', `/api/recordings/${ended.id}`)).status).toBe(204);
    expect(fs.existsSync(path.join(recordingsDir, ended.id))).toBe(false);
  });
});

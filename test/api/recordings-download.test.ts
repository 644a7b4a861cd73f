// A recording's download over real HTTP (docs/design.md, "Recording with
// consent", "Storage and API"): a client reading a large file slowly holds no
// slot of API_CONCURRENCY, so the API answers others meanwhile, and the file
// still arrives whole.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRoom } from '../helpers/api.js';
import { createTestContext, type TestContext, type TestTenant } from '../helpers/app.js';
import { fakeComposer, startRecording } from '../helpers/recordings.js';

const SIZE = 32 * 1024 * 1024;
let ctx: TestContext;
let dir: string;
let tenant: TestTenant;
let base: string;
let download: http.IncomingMessage | undefined;

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-recordings-download-'));
  ctx = await createTestContext({ env: { RECORDINGS_DIR: dir, API_CONCURRENCY: '1', RATE_LIMIT_PER_MINUTE: '0' } });
  base = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
  tenant = await ctx.tenant();
  await tenant.setFeature('recording', true);
});
afterAll(async () => {
  download?.destroy(); // a failed test leaves it paused, which would hold the server's close
  await ctx.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('a slow download', () => {
  it('gives its API_CONCURRENCY slot back once the file is streaming: another request is answered meanwhile', async () => {
    const room = await createRoom(ctx, tenant.instanceToken, { enable_recording: true });
    const active = await startRecording(ctx, room.token);
    await ctx.services.recordings.stop(active.id);
    await ctx.services.recordings.processDue(fakeComposer({ bytes: SIZE }));

    const response = (download = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http.get(`${base}/api/recordings/${active.id}/file`, { headers: { authorization: `Bearer ${tenant.instanceToken}` } }, resolve).on('error', reject);
    }));
    expect(response.statusCode).toBe(200);
    response.pause(); // a client that reads slowly: the server's stream stays open

    // With the one slot still held, this would wait and get 503 after 5 s.
    const started = Date.now();
    const other = await fetch(`${base}/api/rooms/${room.token}`, { headers: { authorization: `Bearer ${tenant.instanceToken}` } });
    expect(other.status).toBe(200);
    console.log(`another request answered in ${Date.now() - started} ms during the download`);
    expect(response.complete).toBe(false);

    let received = 0;
    response.on('data', (chunk: Buffer) => (received += chunk.length));
    response.resume();
    await new Promise((resolve) => response.on('end', resolve));
    expect(received).toBe(SIZE);
  });
});

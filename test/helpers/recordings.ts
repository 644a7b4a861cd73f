// Recordings for the API tests (docs/design.md, "Recording with consent"):
// made through services.recordings as a call would, their files by a fake
// composer (the real one, with Janus and ffmpeg, is tested in test/sfu/ and
// test/browser/recording.test.ts).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Composer } from '../../src/domain/recordings/recording-jobs.js';
import type { TestContext } from './app.js';

/** A composer that writes `bytes` random bytes as the file (or throws `fails`). */
export function fakeComposer(options: { bytes?: number; durationSeconds?: number; fails?: string } = {}): Composer & { calls: string[] } {
  const calls: string[] = [];
  const compose: Composer = async ({ rawDir, outFile }) => {
    calls.push(rawDir);
    if (options.fails) throw new Error(options.fails);
    const bytes = randomBytes(options.bytes ?? 300_000);
    fs.writeFileSync(outFile, bytes);
    return { durationSeconds: options.durationSeconds ?? 12.5, sizeBytes: bytes.length };
  };
  return Object.assign(compose, { calls });
}

/** The room's id, as the calls know it. */
export async function roomIdOf(ctx: TestContext, roomToken: string): Promise<number> {
  const row = await ctx.services.database.db.selectFrom('rooms').select('id').where('token', '=', roomToken).executeTakeFirstOrThrow();
  return Number(row.id);
}

/** A recording started with the host's and a guest's consent, something written to its raw directory. */
export async function startRecording(ctx: TestContext, roomToken: string, options: { raw?: boolean } = {}) {
  const roomId = await roomIdOf(ctx, roomToken);
  const at = ctx.services.clock.now();
  const active = await ctx.services.recordings.start({
    roomId,
    startedBy: 'Dr. Who',
    consents: [
      { peerId: 'peer-host', displayName: 'Dr. Who', role: 'host', acceptedAt: at },
      { peerId: 'peer-guest', displayName: 'Ann', role: 'guest', acceptedAt: new Date(at.getTime() + 1000) },
    ],
  });
  if (options.raw !== false) fs.writeFileSync(path.join(active.rawDir, 'peer-host-camera.1-video-0.mjr'), randomBytes(1000));
  return active;
}

/** A recording made and composed: ready, its file's bytes returned. */
export async function readyRecording(ctx: TestContext, roomToken: string): Promise<{ id: string; bytes: Buffer; roomId: number }> {
  const active = await startRecording(ctx, roomToken);
  await ctx.services.recordings.stop(active.id);
  await ctx.services.recordings.processDue(fakeComposer());
  const file = path.join(ctx.config.recordingsDir, active.id, 'recording.webm');
  return { id: active.id, bytes: fs.readFileSync(file), roomId: active.roomId };
}

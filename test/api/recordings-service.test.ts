// services.recordings as the calls use it (docs/design.md, "Recording with consent"):
// one recording at a time per room, consents, the lease, stop.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoomEvent } from '../../src/domain/buses/room-event-bus.js';
import { createRoom } from '../helpers/api.js';
import { createTestContext, manualClock, type TestContext } from '../helpers/app.js';

const clock = manualClock();
let ctx: TestContext;
let dir: string;
const events: RoomEvent[] = [];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-recordings-'));
  ctx = await createTestContext({ clock, env: { RECORDINGS_DIR: dir } });
  ctx.services.events.subscribe((event) => events.push(event));
});
afterAll(async () => {
  await ctx.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function roomId(overrides: Record<string, unknown> = { enable_recording: true }): Promise<number> {
  const tenant = await ctx.tenant();
  await tenant.setFeature('recording', true);
  const room = await createRoom(ctx, tenant.instanceToken, overrides);
  const row = await ctx.services.repos.rooms.findByToken({ tenantId: tenant.id, organizationId: null, additionalParticipants: false }, room.token);
  return row!.id;
}

const host = { peerId: 'peer-host', displayName: 'Dr. Who', role: 'host' as const, acceptedAt: clock.now() };

describe('services.recordings', () => {
  it('starts one recording at a time, with a raw directory under RECORDINGS_DIR, and says so on the room event bus', async () => {
    const id = await roomId();
    const started = await ctx.services.recordings.start({ roomId: id, startedBy: 'Dr. Who', consents: [host] });
    expect(started).toMatchObject({ roomId: id, consentedPeerIds: ['peer-host'] });
    expect(started.rawDir.startsWith(dir)).toBe(true);
    expect(fs.statSync(started.rawDir).isDirectory()).toBe(true);
    expect(events).toContainEqual({ type: 'recording-changed', roomId: id });
    await expect(ctx.services.recordings.start({ roomId: id, startedBy: 'Dr. Who', consents: [host] })).rejects.toThrow(/recorded already/);
    expect(await ctx.services.recordings.active(id)).toEqual(started);
  });

  it('refuses a room that does not allow recording, and leaves no directory', async () => {
    const id = await roomId({});
    const before = fs.readdirSync(dir).length;
    await expect(ctx.services.recordings.start({ roomId: id, startedBy: 'Dr. Who', consents: [host] })).rejects.toThrow(/does not allow recording/);
    expect(fs.readdirSync(dir)).toHaveLength(before);
    expect(await ctx.services.recordings.active(id)).toBeNull();
  });

  it('adds the consent of a newcomer, renews while recording, and stops: processing with something recorded, failed without', async () => {
    const id = await roomId();
    const started = await ctx.services.recordings.start({ roomId: id, startedBy: 'Dr. Who', consents: [host] });
    clock.advance(5000);
    await ctx.services.recordings.addConsent(started.id, { peerId: 'peer-guest', displayName: 'Ann', role: 'guest', acceptedAt: clock.now() });
    expect((await ctx.services.recordings.active(id))?.consentedPeerIds).toEqual(['peer-host', 'peer-guest']);
    await ctx.services.recordings.renew(started.id);
    fs.writeFileSync(path.join(started.rawDir, 'peer-host-camera-video.mjr'), 'something');
    await ctx.services.recordings.stop(started.id);
    expect(await ctx.services.recordings.active(id)).toBeNull();
    expect((await ctx.services.repos.recordings.find(started.id))?.status).toBe('processing');
    await expect(ctx.services.recordings.renew(started.id)).rejects.toThrow(/not recording/);
    await expect(ctx.services.recordings.addConsent(started.id, host)).rejects.toThrow(/not recording/);
    await ctx.services.recordings.stop(started.id); // twice: harmless

    const empty = await ctx.services.recordings.start({ roomId: id, startedBy: 'Dr. Who', consents: [host] });
    await ctx.services.recordings.stop(empty.id);
    expect((await ctx.services.repos.recordings.find(empty.id))?.status).toBe('failed');
  });
});

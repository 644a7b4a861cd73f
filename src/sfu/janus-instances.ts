// The Janus instances of this node (JANUS_URLS, or the local one) and the
// VideoRoom of each room (docs/design.md, "Group calls through an SFU"). One
// session per instance, opened on first use and again after it was lost; a
// room is pinned in the database to the least loaded instance and its
// VideoRoom created there with a secret of its own; a room whose instance
// stopped answering is moved (to another instance, or to a new VideoRoom on
// the same one once it is back), and the VideoRoom it leaves behind is
// destroyed once that instance answers again (an orphan: a frozen Janus let go
// still holds it).
import { randomBytes, randomInt } from 'node:crypto';
import type { SfuPin, SfuRoomsRepo } from '../domain/sfu/sfu-rooms.repo.js';
import type { Clock } from '../domain/support/clock.js';
import { JanusUnreachableError, openJanusSession, type JanusSession } from './janus-client.js';
import { createVideoRoom, destroyVideoRoom, videoRoomExists } from './video-room.js';

/** Publishers a VideoRoom takes: a camera and a screen for each of the most people a call holds with an SFU. */
export const ROOM_PUBLISHERS = 2 * 32;

export interface JanusInstances {
  readonly urls: readonly string[];
  /** The instance's session, opened (again) if need be. */
  session(instance: string): Promise<JanusSession>;
  /** The room's pin, its VideoRoom created if this node has not seen it there yet. */
  room(roomId: number): Promise<SfuPin>;
  /** The room's instance failed: its new pin, with a VideoRoom ready (null: the room was unpinned meanwhile). */
  move(failed: SfuPin): Promise<SfuPin | null>;
  /** The room's VideoRoom goes and the room is unpinned (the room closed or deleted); `known`: its pin, for a room whose row is gone. */
  release(roomId: number, known?: SfuPin | null): Promise<void>;
  /** Pins of rooms nobody has been in since `before` (pinned before it too), on this node's instances. */
  deserted(before: Date): Promise<SfuPin[]>;
  /** Called when an instance's session is lost (it died, or stopped answering). */
  onLost(listener: (instance: string) => void): void;
  close(): Promise<void>;
}

/** An instance holding VideoRooms moved off it is tried this often until it answers and they are destroyed. */
const ORPHAN_SWEEP_MS = 5_000;

/** A VideoRoom id: numeric in Janus, kept below 2^52 so that it fits a JSON number and the int8 Parley reads as one. */
const freshRoom = () => ({ janusRoom: randomInt(1, 2 ** 47), secret: randomBytes(18).toString('base64url') });

export function createJanusInstances(options: { urls: readonly string[]; apiSecret: string | null; repo: SfuRoomsRepo; clock: Clock }): JanusInstances {
  const { urls, apiSecret, repo, clock } = options;
  const sessions = new Map<string, Promise<JanusSession>>();
  /** VideoRooms this node knows exist (instance and room id), so that a join does not ask every time. */
  const ready = new Set<string>();
  const lostListeners: ((instance: string) => void)[] = [];
  /** VideoRooms moved off an instance that may still hold them (frozen, then let go), by instance. */
  const orphans = new Map<string, SfuPin[]>();
  let closed = false;

  /** Destroys the instance's orphans that the database no longer pins there (a room pinned back keeps its VideoRoom). */
  const sweepOrphans = async (instance: string, janus: JanusSession): Promise<void> => {
    for (const orphan of orphans.get(instance) ?? []) {
      const pinned = await repo.find(orphan.roomId);
      if (!(pinned?.instance === orphan.instance && pinned.janusRoom === orphan.janusRoom)) await destroyVideoRoom(janus, orphan);
      const left = (orphans.get(instance) ?? []).filter((other) => other !== orphan);
      if (left.length) orphans.set(instance, left);
      else orphans.delete(instance);
    }
  };
  const orphanSweep = setInterval(() => {
    for (const instance of orphans.keys()) void session(instance).catch(() => undefined);
  }, ORPHAN_SWEEP_MS);
  orphanSweep.unref();

  const session = (instance: string): Promise<JanusSession> => {
    const existing = sessions.get(instance);
    if (existing) return existing;
    const opening = openJanusSession(instance, apiSecret).then((opened) => {
      opened.onGone(() => {
        if (sessions.get(instance) === opening) sessions.delete(instance);
        for (const key of [...ready]) if (key.startsWith(`${instance} `)) ready.delete(key);
        if (!closed) for (const listener of lostListeners) listener(instance);
      });
      // The instance answers (again): what was moved off it goes.
      if (orphans.has(instance)) void sweepOrphans(instance, opened).catch(() => undefined);
      return opened;
    });
    sessions.set(instance, opening);
    opening.catch(() => sessions.get(instance) === opening && sessions.delete(instance));
    return opening;
  };

  const ensure = async (pin: SfuPin): Promise<SfuPin> => {
    const key = `${pin.instance} ${pin.janusRoom}`;
    if (ready.has(key)) return pin;
    const janus = await session(pin.instance);
    // Created if missing: an instance restarted under the same address has lost its rooms.
    if (!(await videoRoomExists(janus, pin))) await createVideoRoom(janus, pin, ROOM_PUBLISHERS);
    ready.add(key);
    return pin;
  };

  return {
    urls,
    session,
    async room(roomId) {
      const pin = (await repo.find(roomId)) ?? (await repo.pin(roomId, urls, freshRoom(), clock.now()));
      // Pinned by an older configuration to an instance this node does not know: moved to one it does.
      if (!urls.includes(pin.instance)) return (await this.move(pin)) ?? ensure(await repo.pin(roomId, urls, freshRoom(), clock.now()));
      // Pinned to an instance that stopped answering (frozen, its rooms moved already, but still the least loaded): moved on.
      return ensure(pin).catch(async (error: unknown) => {
        if (!(error instanceof JanusUnreachableError) || urls.length < 2) throw error;
        const moved = await this.move(pin);
        if (!moved) throw error;
        return moved;
      });
    },
    async move(failed) {
      ready.delete(`${failed.instance} ${failed.janusRoom}`);
      const moved = await repo.move(failed, urls, freshRoom(), clock.now());
      const known = orphans.get(failed.instance) ?? [];
      if (!known.some((orphan) => orphan.janusRoom === failed.janusRoom)) orphans.set(failed.instance, [...known, failed]);
      return moved ? ensure(moved) : null;
    },
    async release(roomId, known = null) {
      const pin = (await repo.find(roomId)) ?? known;
      if (!pin) return;
      await repo.unpin(roomId);
      ready.delete(`${pin.instance} ${pin.janusRoom}`);
      const janus = await session(pin.instance).catch(() => null);
      if (janus) await destroyVideoRoom(janus, pin).catch(() => undefined);
    },
    async deserted(before) {
      return (await repo.deserted(before)).filter((pin) => urls.includes(pin.instance));
    },
    onLost(listener) {
      lostListeners.push(listener);
    },
    async close() {
      closed = true;
      clearInterval(orphanSweep);
      const open = await Promise.allSettled([...sessions.values()]);
      sessions.clear();
      await Promise.all(open.map((result) => (result.status === 'fulfilled' ? result.value.destroy() : undefined)));
    },
  };
}

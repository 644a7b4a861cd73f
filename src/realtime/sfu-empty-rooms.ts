// VideoRooms whose call ended (docs/design.md, "Group calls through an SFU",
// Faults): a room nobody on this node has used for `emptyRoomMs` (its call
// ended, or went back to peer to peer) has its VideoRoom destroyed and its pin
// dropped, once Janus confirms that nobody publishes in it (a participant on
// another node would), so that Janus does not collect the VideoRooms of every
// call it ever carried. The wait is long enough for a reload or a short drop
// to come back to the same VideoRoom. A call whose last participant's node
// died has nobody left to start that wait: every node also sweeps, every
// `emptyRoomMs`, the pins of rooms nobody has been in for that long (the
// survivors mark a dead node's participants left), with the same check.
import type { FastifyBaseLogger } from 'fastify';
import type { SfuPin } from '../domain/sfu/sfu-rooms.repo.js';
import { JanusError } from '../sfu/janus-client.js';
import type { JanusInstances } from '../sfu/janus-instances.js';
import { listPublishers, VIDEOROOM } from '../sfu/video-room.js';

/** VideoRoom's "no such room": the room was destroyed already (by another node, or Janus restarted). */
export const NO_SUCH_ROOM = 426;

export const isRoomGone = (error: unknown) => error instanceof JanusError && error.code === NO_SUCH_ROOM;

export interface EmptyRooms {
  /** Nobody here uses the room any more: its VideoRoom goes after the wait, unless someone comes. */
  left(roomId: number, pin: SfuPin): void;
  /** Someone here uses the room (again): it stays. */
  used(roomId: number): void;
  close(): void;
}

export function createEmptyRooms(options: { instances: JanusInstances; emptyRoomMs: number; log: FastifyBaseLogger; inUse(roomId: number): boolean }): EmptyRooms {
  const { instances, inUse } = options;
  const timers = new Map<number, ReturnType<typeof setTimeout>>();
  const warn = (roomId: number) => (error: unknown) => {
    // Gone already: another node destroyed it, or a restarted Janus lost it (its pin is replaced on the next use).
    if (!isRoomGone(error)) options.log.warn({ err: error, room: roomId }, 'empty sfu room not released');
  };

  async function releaseIfEmpty(roomId: number, pin: SfuPin): Promise<void> {
    timers.delete(roomId);
    if (inUse(roomId)) return;
    const janus = await instances.session(pin.instance);
    const handle = await janus.attach(VIDEOROOM);
    const publishers = await listPublishers(handle, pin).finally(() => handle.detach());
    if (publishers.length === 0 && !inUse(roomId)) await instances.release(roomId, pin);
  }

  const used = (roomId: number) => {
    clearTimeout(timers.get(roomId));
    timers.delete(roomId);
  };

  // Rooms nobody is in any more, whichever node they were on (one whose node died included); one at a time.
  let sweeping = false;
  const sweep = setInterval(() => {
    if (sweeping) return;
    sweeping = true;
    void instances
      .deserted(new Date(Date.now() - options.emptyRoomMs))
      .then(async (pins) => {
        for (const pin of pins) if (!timers.has(pin.roomId)) await releaseIfEmpty(pin.roomId, pin).catch(warn(pin.roomId));
      })
      .catch((error: unknown) => options.log.warn({ err: error }, 'deserted sfu rooms not swept'))
      .finally(() => {
        sweeping = false;
      });
  }, options.emptyRoomMs);
  sweep.unref();

  return {
    left(roomId, pin) {
      if (timers.has(roomId) || inUse(roomId)) return;
      const timer = setTimeout(() => void releaseIfEmpty(roomId, pin).catch(warn(roomId)), options.emptyRoomMs);
      timer.unref();
      timers.set(roomId, timer);
    },
    used,
    close() {
      clearInterval(sweep);
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}

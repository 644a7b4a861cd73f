import { describe, expect, it } from 'vitest';
import type { RoomEvent } from '../domain/buses/room-event-bus.js';
import { forwardedEvents } from './forwarded-events.js';

describe('the room events the main process forwards to the calls process', () => {
  it("forwards a room's settings updates only while someone is in it there, and every close and delete", () => {
    const sent: RoomEvent[] = [];
    const forwarded = forwardedEvents((event) => sent.push(event));
    forwarded.bus.publish({ type: 'room-updated', roomId: 1 });
    forwarded.occupied(1, true);
    forwarded.bus.publish({ type: 'room-updated', roomId: 1 });
    forwarded.bus.publish({ type: 'room-updated', roomId: 2 });
    forwarded.occupied(1, false);
    forwarded.bus.publish({ type: 'room-updated', roomId: 1 });
    forwarded.bus.publish({ type: 'room-closed', roomId: 3 });
    forwarded.bus.publish({ type: 'room-deleted', roomId: 4 });
    expect(sent).toEqual([
      { type: 'room-updated', roomId: 1 },
      { type: 'room-closed', roomId: 3 },
      { type: 'room-deleted', roomId: 4 },
    ]);
  });

  it("forwards every recording-changed (a recording stopped by the main process's jobs: docs/design.md, \"Recording with consent\")", () => {
    const sent: RoomEvent[] = [];
    const forwarded = forwardedEvents((event) => sent.push(event));
    forwarded.bus.publish({ type: 'recording-changed', roomId: 5 });
    expect(sent).toEqual([{ type: 'recording-changed', roomId: 5 }]);
  });

  it('forgets every room when a new calls process starts', () => {
    const sent: RoomEvent[] = [];
    const forwarded = forwardedEvents((event) => sent.push(event));
    forwarded.occupied(7, true);
    forwarded.reset();
    forwarded.bus.publish({ type: 'room-updated', roomId: 7 });
    expect(sent).toEqual([]);
  });
});

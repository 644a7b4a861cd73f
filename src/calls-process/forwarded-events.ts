// The room events the main process sends the calls process on a node without
// Redis. A room's settings updates go only while someone is in that room
// there: the calls process says when the first participant of a room arrives
// and when the last one leaves (RoomEventBus.interest). Otherwise every PUT
// of a room nobody is in would wake the calls process for nothing, on the
// cores the API and the database need (bench/README.md, "room events only
// where someone is"). A close or a delete always goes: a join still in flight
// must meet it (closed-rooms.ts).
import type { RoomEvent, RoomEventBus } from '../domain/buses/room-event-bus.js';

export function forwardedEvents(send: (event: RoomEvent) => void) {
  const occupied = new Set<number>();
  const bus: RoomEventBus = {
    publish(event) {
      if (event.type !== 'room-updated' || occupied.has(event.roomId)) send(event);
    },
    // Nothing here listens: the calls are in the other process.
    subscribe: () => () => {},
  };
  return {
    bus,
    /** What the calls process said of a room: someone is in it there (true), or nobody any more. */
    occupied(roomId: number, someone: boolean): void {
      if (someone) occupied.add(roomId);
      else occupied.delete(roomId);
    },
    /** A new calls process has nobody in any room. */
    reset(): void {
      occupied.clear();
    },
  };
}

// What happens to a room through the API that an ongoing call must hear of.
// The in-process bus (local-room-event-bus.ts) serves one node; a cluster
// swaps in a bus that crosses nodes (redis-buses.ts, same interface), so the
// services never know the difference.

export type RoomEvent =
  | { type: 'room-updated'; roomId: number }
  | { type: 'room-closed'; roomId: number }
  | { type: 'room-deleted'; roomId: number }
  /**
   * A recording of the room started, gained a consent or stopped
   * (services.recordings; docs/design.md, "Recording with consent"): read
   * `recordings.active(roomId)` again. Not a close: a handler must not eject anyone for it.
   */
  | { type: 'recording-changed'; roomId: number };

export interface RoomEventBus {
  publish(event: RoomEvent): void;
  subscribe(listener: (event: RoomEvent) => void): () => void;
  /**
   * The hub has someone in this room (true) or nobody any more (false). Only
   * a bus that crosses to another process needs it (calls-process/, without
   * Redis): it leaves out a room's settings updates while nobody there is in
   * it. Resolves once the updates published from then on will arrive; the
   * hub then reads the room's settings again, so that none published in
   * between is missed.
   */
  interest?(roomId: number, someone: boolean): Promise<void>;
}

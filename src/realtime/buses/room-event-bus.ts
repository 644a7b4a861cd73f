// What happens to a room through the API that an ongoing call must hear of.
// The in-process bus (local-room-event-bus.ts) serves one node; a cluster
// swaps in a bus that crosses nodes (redis-buses.ts, same interface), so the
// services never know the difference.

export type RoomEvent =
  | { type: 'room-updated'; roomId: number }
  | { type: 'room-closed'; roomId: number }
  | { type: 'room-deleted'; roomId: number };

export interface RoomEventBus {
  publish(event: RoomEvent): void;
  subscribe(listener: (event: RoomEvent) => void): () => void;
}

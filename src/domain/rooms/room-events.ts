// What happens to a room through the API that an ongoing call must hear of.
// The in-process bus serves one node; a cluster swaps in a bus that crosses
// nodes (same interface), so the services never know the difference.
import { EventEmitter } from 'node:events';

export type RoomEvent =
  | { type: 'room-updated'; roomId: number }
  | { type: 'room-closed'; roomId: number }
  | { type: 'room-deleted'; roomId: number };

export interface RoomEventBus {
  publish(event: RoomEvent): void;
  subscribe(listener: (event: RoomEvent) => void): () => void;
}

export function createLocalEventBus(): RoomEventBus {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    publish: (event) => void emitter.emit('event', event),
    subscribe(listener) {
      emitter.on('event', listener);
      return () => emitter.off('event', listener);
    },
  };
}

// The RoomEventBus of a single node: an in-process emitter.
import { EventEmitter } from 'node:events';
import type { RoomEventBus } from './room-event-bus.js';

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

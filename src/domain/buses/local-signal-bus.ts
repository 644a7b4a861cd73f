// The SignalBus of a single node: an in-process emitter, one event name per room.
import { EventEmitter } from 'node:events';
import type { SignalBus } from './signal-bus.js';

export function createLocalSignalBus(): SignalBus {
  const emitter = new EventEmitter();
  // One listener per room with participants on this node: no count is a leak.
  emitter.setMaxListeners(0);
  return {
    publish(roomId, envelope) {
      emitter.emit(String(roomId), envelope);
    },
    subscribe(roomId, handler) {
      emitter.on(String(roomId), handler);
      return () => emitter.off(String(roomId), handler);
    },
  };
}

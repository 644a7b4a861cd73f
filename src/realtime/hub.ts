// The room hub of one node: it owns this node's connections, turns parsed
// frames into domain calls, and passes messages between participants only
// through the SignalBus of their room. It knows nothing of ws: a connection
// is anything with send() and close(). The parts are in the files listed in
// README.md; this puts them together.
import { receiveDecision } from './handlers/host-controls.js';
import { heardForRecording } from './handlers/recording.js';
import { handleRoomEvent } from './handlers/room-events.js';
import { recordingSfuLost } from './recording-sync.js';
import { createHubContext, type HubContext, type HubOptions } from './hub-context.js';
import { openSession, type SessionHandle } from './session-handle.js';
import type { Connection } from './session.js';
import { shutdownHub } from './shutdown.js';

export { CloseCode } from './close-codes.js';
export { MAX_FAILED_JOINS } from './handlers/join.js';
export type { HubOptions } from './hub-context.js';
export type { SessionHandle } from './session-handle.js';
export type { Connection } from './session.js';

/** The hub's shared state, wired to the handlers that react to what its rooms hear. */
export function wiredHubContext(options: HubOptions): HubContext {
  const ctx = createHubContext(options, { decision: receiveDecision, roomEvent: handleRoomEvent, heard: heardForRecording });
  // A room no Janus took after its own was lost: its recording ends (docs/design.md, "Recording with consent").
  ctx.sfu?.onRoomLost((roomId) => void ctx.inFlight.track(recordingSfuLost(ctx, roomId)).catch((error: unknown) => ctx.log.warn({ err: error, room: roomId }, 'recording not stopped')));
  return ctx;
}

export function createHub(options: HubOptions) {
  const ctx = wiredHubContext(options);

  const unsubscribeEvents = options.events.subscribe((event) => {
    ctx.inFlight.track(handleRoomEvent(ctx, event)).catch((error: unknown) => ctx.log.error({ err: error }, 'room event handling failed'));
  });

  return {
    /** A new connection: the returned handle gets its frames and its close. */
    connect(connection: Connection): SessionHandle {
      return openSession(ctx, connection);
    },

    /** Connected sessions on this node (for readiness and tests of draining). */
    get size() {
      return ctx.rooms.sessionCount;
    },

    /**
     * Graceful stop: tells everyone the server is going away (1001, on which
     * browsers reconnect and resume elsewhere), records their leave, waits for
     * the database. A join still in flight is ended the same way when it lands.
     */
    async shutdown(): Promise<void> {
      unsubscribeEvents();
      ctx.recording.stop();
      await shutdownHub(ctx);
      await ctx.sfu?.close();
    },
  };
}

export type Hub = ReturnType<typeof createHub>;

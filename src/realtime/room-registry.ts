// The rooms that have participants on this node: which sessions are in each,
// the room's settings as this node last read them, and the room's channel on
// the SignalBus. Participants reach each other only through that channel, so
// a participant on another node is reached the same way as one on this node.
//
// A participant waiting to be let in (docs/design.md, "Waiting room") is in its room's sessions
// too, so that a host's decision finds it on whichever node it is, but it is
// given nothing else of the call.
//
// A chat line gets an id and is kept by the node that sent it, for a node
// that was away from Redis when it went out (chat-lines.ts).
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { HostDecision, SignalBus, SignalEnvelope } from '../domain/buses/signal-bus.js';
import { createKeptLines, createSeenLines, type SeenLines } from './chat-lines.js';
import { CloseCode } from './close-codes.js';
import type { RoomSettings } from '../shared/protocol.js';
import { endSession, type Session } from './session.js';

export interface LocalRoom {
  sessions: Set<Session>;
  settings: RoomSettings;
  unsubscribe: () => void;
  /** The chat lines this room's sessions here were handed already. */
  seen: SeenLines;
}

export interface RoomRegistryOptions {
  bus: SignalBus;
  log: FastifyBaseLogger;
  /** A host decided about a participant connected here (handlers/host-controls.ts acts on it). */
  onDecision(session: Session, decision: HostDecision['decision']): void;
  /**
   * Everything that arrives on the channel of a room with someone here, once
   * per node, before its sessions get it (the recording handlers watch who
   * leaves and count answers there). True: it was for the node, not for its sessions.
   */
  onHeard?(roomId: number, message: SignalEnvelope['message']): boolean;
  /** The first session of a room entered here (true), or the last one left (false). */
  onOccupied?(roomId: number, occupied: boolean): void;
  /** Wall-clock time in ms, the same on every node (chat lines' `at`). */
  now?: () => number;
}

export interface PublishOptions {
  /** When the bus cannot take the message, still hand it to this node's sessions (default true). */
  localFallback?: boolean;
  /** Only participants of this role get it. */
  toRole?: 'host';
  /** A chat line: numbered, and kept by this node once the bus took it, for the nodes that missed it. */
  line?: boolean;
}

export function createRoomRegistry({ bus, log, onDecision, onHeard = () => false, onOccupied = () => {}, now = Date.now }: RoomRegistryOptions) {
  const rooms = new Map<number, LocalRoom>();
  // Only a bus that loses the other nodes and gets them back needs to send a line again.
  const kept = bus.onReconnected ? createKeptLines(now) : null;

  /** Sends on the bus, for nobody waiting on the outcome: a failure is counted by the bus and dropped here. */
  function sendQuietly(roomId: number, envelope: SignalEnvelope) {
    Promise.resolve()
      .then(() => bus.publish(roomId, envelope))
      .catch((error: unknown) => log.debug({ err: error }, 'signal bus publish failed'));
  }

  /** What arrived on a room's channel, handed to this node's sessions it is meant for. */
  function deliver(roomId: number, envelope: SignalEnvelope) {
    const room = rooms.get(roomId);
    if (!room) return;
    const { message } = envelope;
    if (message.type === 'chat-catch-up') {
      for (const line of kept?.of(roomId) ?? []) sendQuietly(roomId, line);
      return;
    }
    if (!room.seen.firstTime(envelope)) return;
    if (onHeard(roomId, message) || message.type === 'recording-answer' || message.type === 'recording-back') return;
    for (const session of room.sessions) {
      const participant = session.participant;
      if (session.id === envelope.fromSession || !participant || (session.state !== 'joined' && session.state !== 'waiting')) continue;
      if (envelope.to !== null && envelope.to !== participant.peerId) continue;
      if (envelope.toRole && envelope.toRole !== participant.role) continue;
      if (message.type === 'session-replaced') {
        endSession(session, CloseCode.replaced, 'resumed on another connection', registry);
      } else if (message.type === 'host-decision') {
        onDecision(session, message.decision);
      } else if (session.state === 'joined') {
        session.connection.send(message);
      }
    }
  }

  const registry = {
    /** Adds a joined session to its room, subscribing this node to the room's channel if it is the first. */
    enter(roomId: number, session: Session, settings: RoomSettings): LocalRoom {
      let room = rooms.get(roomId);
      if (!room) {
        room = { sessions: new Set(), settings, unsubscribe: bus.subscribe(roomId, (envelope) => deliver(roomId, envelope)), seen: createSeenLines(now) };
        rooms.set(roomId, room);
        onOccupied(roomId, true);
      }
      room.settings = settings;
      room.sessions.add(session);
      return room;
    },

    /** Removes a session from its room; the last one out unsubscribes this node from the room's channel. */
    leave(session: Session): void {
      const roomId = session.participant?.roomId;
      if (roomId === undefined) return;
      const room = rooms.get(roomId);
      if (!room) return;
      room.sessions.delete(session);
      if (room.sessions.size === 0) {
        room.unsubscribe();
        rooms.delete(roomId);
        onOccupied(roomId, false);
      }
    },

    get(roomId: number): LocalRoom | undefined {
      return rooms.get(roomId);
    },

    /**
     * Sends to the sender's room on every node: to peer `to`, or to everyone
     * (null). Never back to the sending connection. Resolves to whether the
     * bus took it. When it did not (Redis away), the sessions on this node
     * still get it unless `localFallback` is false: a call whose participants
     * are all on this node goes on (docs/deploy.md, "What happens when…").
     */
    async publish(session: Session, to: string | null, message: SignalEnvelope['message'], { localFallback = true, toRole, line }: PublishOptions = {}): Promise<boolean> {
      if (!session.participant) return false;
      const roomId = session.participant.roomId;
      const envelope: SignalEnvelope = { fromSession: session.id, to, message, ...(toRole ? { toRole } : {}), ...(line ? { lineId: randomUUID(), at: now() } : {}) };
      try {
        await bus.publish(roomId, envelope);
        if (line) kept?.keep(roomId, envelope);
        return true;
      } catch (error) {
        log.debug({ err: error }, 'signal bus publish failed');
        if (localFallback) deliver(roomId, envelope);
        return false;
      }
    },

    /**
     * Sends to a room on every node from the server itself (no connection of
     * it is left out), as publish does; `to` and `toRole` as there.
     */
    async tell(roomId: number, message: SignalEnvelope['message'], { to = null, toRole }: { to?: string | null; toRole?: 'host' } = {}): Promise<void> {
      const envelope: SignalEnvelope = { fromSession: 'server', to, message, ...(toRole ? { toRole } : {}) };
      try {
        await bus.publish(roomId, envelope);
      } catch (error) {
        log.debug({ err: error }, 'signal bus publish failed');
        deliver(roomId, envelope);
      }
    },

    /**
     * After the path between nodes came back: everyone joined here announces
     * themselves to their room again, so that people who joined on other
     * nodes while it was down find each other, and everyone waiting here is
     * listed again to the hosts (docs/deploy.md, "What happens when…").
     */
    announceAll(): void {
      for (const room of rooms.values()) {
        for (const session of room.sessions) {
          const participant = session.participant;
          if (!participant) continue;
          const peer = { id: participant.peerId, name: participant.name, role: participant.role };
          if (session.state === 'joined') void registry.publish(session, null, { type: 'peer-present', peer });
          if (session.state === 'waiting') void registry.publish(session, null, { type: 'participant-waiting', peer }, { toRole: 'host' });
        }
      }
    },

    /**
     * After the path between nodes came back: each room with someone here asks
     * every node in it for the chat lines they keep, for those that went out
     * while this node could not hear them (chat-lines.ts). The nodes that were
     * back earlier sent theirs then, which this node missed: hence the asking.
     */
    askForMissedLines(): void {
      for (const roomId of rooms.keys()) sendQuietly(roomId, { fromSession: 'catch-up', to: null, message: { type: 'chat-catch-up' } });
    },

    /** Sessions in rooms on this node. */
    get sessionCount(): number {
      let n = 0;
      for (const room of rooms.values()) n += room.sessions.size;
      return n;
    },
  };
  return registry;
}

export type RoomRegistry = ReturnType<typeof createRoomRegistry>;

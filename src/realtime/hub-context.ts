// What the parts of a hub share: the options it was built with and this
// node's state (open sessions, rooms, leaves and other work in flight).
// Handlers get it as their first argument, so each can be built and tested
// without the others.
import type { FastifyBaseLogger } from 'fastify';
import type { ParticipationService } from '../domain/participation/participation.service.js';
import type { Clock } from '../domain/support/clock.js';
import type { RoomEvent, RoomEventBus } from '../domain/buses/room-event-bus.js';
import type { HostDecision, SignalBus, SignalEnvelope } from '../domain/buses/signal-bus.js';
import { createClosedRooms, type ClosedRooms } from './closed-rooms.js';
import { createDepartures, type Departures } from './departures.js';
import { createInFlight, type InFlight } from './in-flight.js';
import type { IceServerInfo } from '../shared/protocol.js';
import { createRecordingRooms, type RecordingRooms, type RecordingsPort } from './recording-rooms.js';
import { createRoomRegistry, type RoomRegistry } from './room-registry.js';
import { endSession, type Session } from './session.js';
import type { SfuCalls } from './sfu-calls.js';

/**
 * When the participants here are announced again after Redis came back: at
 * once, and then again, for the nodes that subscribed a moment later (those
 * that reconnected in the same retry are milliseconds apart, the others up to
 * one retry interval: Redis is retried every 0.2–2 s, buses/redis-buses.ts).
 */
const ANNOUNCE_AGAIN_AFTER_MS = [1000, 3000];

export interface HubOptions {
  participation: ParticipationService;
  bus: SignalBus;
  events: RoomEventBus;
  clock: Clock;
  log: FastifyBaseLogger;
  publicUrl: string;
  iceServersFor(peerId: string): IceServerInfo[];
  /** How often a participant in the call gets fresh ICE servers (ice-renewal.ts); null or absent: never. */
  iceRenewalMs?: number | null;
  iceTransportPolicy: 'all' | 'relay';
  /** Observes every well-formed frame and the number of open connections (metrics). */
  observe?: { message(type: string): void; connections(delta: 1 | -1): void };
  /** A connection that has not joined after this long is closed. */
  joinTimeoutMs?: number;
  /** How long a dropped participant stays in the call while its browser reconnects (0: it leaves at once). */
  reconnectGraceMs?: number;
  /** Group calls through Janus (sfu-calls.ts); absent: every call is peer to peer. */
  sfu?: SfuCalls | null;
  /** Recording with consent (handlers/recording.ts); absent: nobody records through this node. */
  recordings?: RecordingsPort | null;
  /** How long people have to answer a request to record, and how often a recording's lease is renewed (defaults: 60 s, 10 s). */
  recordingTimes?: { consentMs?: number; renewMs?: number };
}

export interface HubContext {
  options: HubOptions;
  participation: ParticipationService;
  clock: Clock;
  log: FastifyBaseLogger;
  /** Every open connection, joined or not: a stop must reach those still on the join screen too. */
  open: Set<Session>;
  rooms: RoomRegistry;
  closedRooms: ClosedRooms;
  departures: Departures;
  inFlight: InFlight;
  sfu: SfuCalls | null;
  /** The recordings of the rooms with someone here, and the requests to record this node holds. */
  recording: RecordingRooms;
  /** The server ends a session: it leaves its room here, its socket closes, the close is no drop. */
  endSession(session: Session, code: number, reason: string): void;
}

/**
 * What the hub does when its room registry hears something: a host's decision
 * about a participant held here, or a room here again of interest. The
 * handlers are passed in (hub.ts) so that this module, which every handler
 * imports, imports none of them.
 */
export interface HubReactions {
  decision(ctx: HubContext, session: Session, decision: HostDecision['decision']): Promise<void>;
  roomEvent(ctx: HubContext, event: RoomEvent): Promise<void>;
  /** Something arrived on a room's channel (room-registry.ts onHeard); true: it was for the node only. */
  heard?(ctx: HubContext, roomId: number, message: SignalEnvelope['message']): boolean;
}

export function createHubContext(options: HubOptions, reactions: HubReactions): HubContext {
  const { participation, clock, log } = options;
  const inFlight = createInFlight();
  const rooms = createRoomRegistry({
    bus: options.bus,
    log,
    onHeard: (roomId, message) => reactions.heard?.(context, roomId, message) ?? false,
    onDecision: (session, decision) => {
      inFlight.track(reactions.decision(context, session, decision)).catch((error: unknown) => log.error({ err: error }, 'host decision failed'));
    },
    onOccupied: (roomId, occupied) => {
      const heard = options.events.interest?.(roomId, occupied);
      if (!heard || !occupied) return;
      // An update published before the bus heard of this room did not come
      // here: the settings are read again once it has.
      inFlight.track(heard.then(() => reactions.roomEvent(context, { type: 'room-updated', roomId }))).catch((error: unknown) => log.error({ err: error }, 'room event handling failed'));
    },
  });
  // People who joined on other nodes while Redis was away have never heard of
  // each other. An announcement made before another node subscribed again is
  // lost there, so it is repeated (pages ignore a peer they are connected to).
  options.bus.onReconnected?.(() => {
    rooms.askForMissedLines();
    rooms.announceAll();
    for (const ms of ANNOUNCE_AGAIN_AFTER_MS) setTimeout(() => rooms.announceAll(), ms).unref();
  });
  const context: HubContext = {
    options,
    participation,
    clock,
    log,
    open: new Set(),
    rooms,
    closedRooms: createClosedRooms(clock),
    sfu: options.sfu ?? null,
    recording: createRecordingRooms(),
    departures: createDepartures({ participation, rooms, inFlight, log, reconnectGraceMs: options.reconnectGraceMs ?? 0 }),
    inFlight,
    endSession: (session, code, reason) => endSession(session, code, reason, rooms),
  };
  return context;
}

// The room hub of one node: it owns this node's connections, turns parsed
// frames into domain calls, and passes messages between participants only
// through the SignalBus of their room. It knows nothing of ws: a connection
// is anything with send() and close().
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { NotFoundError, RoomClosedError } from '../errors.js';
import {
  returnUrlOf,
  RoomFullError,
  settingsOf,
  type Participant,
  type ParticipationService,
} from '../domain/participation/participation.service.js';
import type { RoomEvent, RoomEventBus } from './buses/room-event-bus.js';
import type { Clock } from '../domain/support/clock.js';
import {
  parseClientMessage,
  type ClientMessage,
  type ErrorCode,
  type IceServerInfo,
  type ParseResult,
  type RoomSettings,
  type ServerMessage,
} from './protocol.js';
import type { SignalBus, SignalEnvelope } from './buses/signal-bus.js';

/** WebSocket close codes the browser acts on (4000-4999 are for applications, RFC 6455 §7.4.2). */
export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  roomClosed: 4001,
  replaced: 4002,
  joinTimeout: 4003,
  /** Too many join attempts with unknown links on one connection (guessing). */
  notFound: 4004,
  /** Kept flooding after being told to slow down (RFC 6455 §7.4.1: policy violation). */
  policy: 1008,
} as const;

/** Unknown join links one connection may try: a browser sends one; more is someone guessing. */
export const MAX_FAILED_JOINS = 5;

export interface Connection {
  send(message: ServerMessage): void;
  close(code: number, reason: string): void;
}

export interface HubOptions {
  participation: ParticipationService;
  bus: SignalBus;
  events: RoomEventBus;
  clock: Clock;
  log: FastifyBaseLogger;
  publicUrl: string;
  iceServersFor(peerId: string): IceServerInfo[];
  iceTransportPolicy: 'all' | 'relay';
  /** Observes every well-formed frame and the number of open connections (metrics). */
  observe?: { message(type: string): void; connections(delta: 1 | -1): void };
  /** A connection that has not joined after this long is closed. */
  joinTimeoutMs?: number;
}

export interface SessionHandle {
  onFrame(raw: string): void;
  onClose(): void;
}

/** A token bucket: `capacity` messages at once, refilled at `perSecond`. */
function bucket(capacity: number, perSecond: number, clock: Clock) {
  let tokens = capacity;
  let last = clock.now().getTime();
  return () => {
    const now = clock.now().getTime();
    tokens = Math.min(capacity, tokens + ((now - last) / 1000) * perSecond);
    last = now;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}

interface Session {
  id: string;
  connection: Connection;
  state: 'new' | 'joining' | 'joined' | 'gone';
  participant: Participant | null;
  sharing: string | null;
  /** Closed by the server (room closed, replaced, left): the close must not count as a drop. */
  ended: boolean;
  allowFrame: () => boolean;
  /** Frames refused for the rate: a connection that spends these too keeps flooding and is closed. */
  allowRefusal: () => boolean;
  allowChat: () => boolean;
  failedJoins: number;
  joinTimer: NodeJS.Timeout | null;
}

interface LocalRoom {
  sessions: Set<Session>;
  settings: RoomSettings;
  unsubscribe: () => void;
}

function requestIdOf(parsed: ParseResult): string | undefined {
  if (!parsed.ok) return parsed.requestId;
  return 'requestId' in parsed.message ? parsed.message.requestId : undefined;
}

export function createHub(options: HubOptions) {
  const { participation, bus, clock, log } = options;
  const rooms = new Map<number, LocalRoom>();
  /** Every open connection, joined or not: a stop must reach those still on the join screen too. */
  const open = new Set<Session>();
  /** Rooms closed or deleted recently: a join that raced with the close is ejected when it lands. */
  const closedRooms = new Map<number, number>();
  /** Leaves in flight per participant token: a resume waits for them so that it is not undone. */
  const pendingLeaves = new Map<string, Promise<unknown>>();
  const pending = new Set<Promise<unknown>>();

  const track = <T>(promise: Promise<T>): Promise<T> => {
    pending.add(promise);
    void promise.finally(() => pending.delete(promise)).catch(() => {});
    return promise;
  };

  function reply(session: Session, message: ServerMessage) {
    if (session.state !== 'gone' || message.type === 'room-closed' || message.type === 'left') session.connection.send(message);
  }

  function fail(session: Session, code: ErrorCode, message: string, requestId?: string) {
    reply(session, { type: 'error', code, message, ...(requestId ? { requestId } : {}) });
  }

  function deliver(roomId: number, envelope: SignalEnvelope) {
    const room = rooms.get(roomId);
    if (!room) return;
    for (const session of room.sessions) {
      if (session.id === envelope.fromSession || session.state !== 'joined' || !session.participant) continue;
      if (envelope.to !== null && envelope.to !== session.participant.peerId) continue;
      if (envelope.message.type === 'session-replaced') {
        endSession(session, CloseCode.replaced, 'resumed on another connection');
      } else {
        session.connection.send(envelope.message);
      }
    }
  }

  function publish(session: Session, to: string | null, message: SignalEnvelope['message']) {
    if (!session.participant) return;
    void Promise.resolve(bus.publish(session.participant.roomId, { fromSession: session.id, to, message })).catch((error: unknown) =>
      log.warn({ err: error }, 'signal bus publish failed'),
    );
  }

  function enterRoom(roomId: number, session: Session, settings: RoomSettings) {
    let room = rooms.get(roomId);
    if (!room) {
      room = { sessions: new Set(), settings, unsubscribe: bus.subscribe(roomId, (envelope) => deliver(roomId, envelope)) };
      rooms.set(roomId, room);
    }
    room.settings = settings;
    room.sessions.add(session);
    return room;
  }

  function leaveRoom(session: Session) {
    const roomId = session.participant?.roomId;
    if (roomId === undefined) return;
    const room = rooms.get(roomId);
    if (!room) return;
    room.sessions.delete(session);
    if (room.sessions.size === 0) {
      room.unsubscribe();
      rooms.delete(roomId);
    }
  }

  /** The server ends a session: no reconnect counts as a drop, the socket closes. */
  function endSession(session: Session, code: number, reason: string) {
    if (session.ended) return;
    session.ended = true;
    session.state = 'gone';
    leaveRoom(session);
    session.connection.close(code, reason);
  }

  /** Marks the participant left and tells the room, unless another connection took it over. */
  function markLeft(participant: Participant, session: Session): Promise<void> {
    const leaving = track(
      participation.leave(participant.token).then((wasHere) => {
        if (wasHere) publish(session, null, { type: 'peer-left', peerId: participant.peerId });
      }),
    );
    pendingLeaves.set(participant.token, leaving);
    return leaving
      .catch((error: unknown) => log.warn({ err: error, peer: participant.peerId }, 'could not record a leave'))
      .finally(() => {
        if (pendingLeaves.get(participant.token) === leaving) pendingLeaves.delete(participant.token);
      });
  }

  async function handleJoin(session: Session, message: Extract<ClientMessage, { type: 'join' }>) {
    session.state = 'joining';
    if (message.participantToken) await pendingLeaves.get(message.participantToken)?.catch(() => {});
    let joined;
    try {
      joined = await track(participation.join(message));
    } catch (error) {
      if (!session.ended) session.state = 'new';
      if (error instanceof NotFoundError) {
        fail(session, 'not-found', 'This join link is not valid', message.requestId);
        if (++session.failedJoins >= MAX_FAILED_JOINS) endSession(session, CloseCode.notFound, 'too many unknown join links');
        return;
      }
      if (error instanceof RoomClosedError) return fail(session, 'room-closed', 'This room is closed', message.requestId);
      if (error instanceof RoomFullError) return fail(session, 'room-full', error.message, message.requestId);
      throw error;
    }
    const { participant, room, resumed } = joined;
    if (session.ended) {
      // The socket went away (or the server began to stop) while the database answered.
      await markLeft(participant, session);
      return;
    }
    if (session.joinTimer) clearTimeout(session.joinTimer);
    session.joinTimer = null;
    session.participant = participant;
    session.state = 'joined';
    enterRoom(room.id, session, settingsOf(room));
    if (closedRooms.has(room.id)) {
      reply(session, { type: 'room-closed', reason: 'closed' });
      endSession(session, CloseCode.roomClosed, 'room closed');
      await markLeft(participant, session);
      return;
    }
    if (resumed) publish(session, participant.peerId, { type: 'session-replaced' });
    const self = { id: participant.peerId, name: participant.name, role: participant.role };
    publish(session, null, { type: 'peer-joined', peer: self });
    // Read in the join's transaction, after the room's row was locked: no second query before the reply.
    const peers = joined.peers.map((p) => ({ id: p.peerId, name: p.name, role: p.role }));
    log.info({ room: room.id, peer: participant.peerId, resumed }, 'participant joined');
    reply(session, {
      type: 'joined',
      requestId: message.requestId,
      participantToken: participant.token,
      self,
      peers,
      settings: settingsOf(room),
      iceServers: options.iceServersFor(participant.peerId),
      iceTransportPolicy: options.iceTransportPolicy,
      returnUrl: returnUrlOf(room, participant.role),
      resumed,
    });
  }

  async function handleInvite(session: Session, participant: Participant, settings: RoomSettings, requestId: string) {
    if (!settings.invites) return fail(session, 'invites-disabled', 'Invites are switched off for this room', requestId);
    if (participant.role !== 'host') return fail(session, 'forbidden', 'Only the host can invite', requestId);
    const token = await track(participation.createInvite(participant.roomId));
    reply(session, { type: 'invite-created', requestId, url: `${options.publicUrl}/join/${token}` });
  }

  async function handle(session: Session, message: ClientMessage) {
    if (message.type === 'join') {
      if (session.state !== 'new') return fail(session, 'already-joined', 'This connection has joined already', message.requestId);
      return handleJoin(session, message);
    }
    const participant = session.participant;
    const requestId = 'requestId' in message ? message.requestId : undefined;
    if (session.state !== 'joined' || !participant) return fail(session, 'not-joined', 'Send join first', requestId);
    const settings = rooms.get(participant.roomId)?.settings;
    if (!settings) return fail(session, 'not-joined', 'Send join first', requestId);
    const from = participant.peerId;
    switch (message.type) {
      case 'signal':
        // Published on this participant's room only: a peer id of another room matches nobody there.
        return publish(session, message.to, { type: 'signal', from, data: message.data });
      case 'chat':
        if (!settings.chat) return fail(session, 'chat-disabled', 'Chat is switched off for this room', requestId);
        if (!session.allowChat()) return fail(session, 'rate-limited', 'Too many chat messages; wait a moment', requestId);
        publish(session, null, { type: 'chat', from, name: participant.name, text: message.text, sentAt: clock.now().toISOString() });
        return reply(session, { type: 'ack', requestId: message.requestId });
      case 'media-state':
        return publish(session, null, { type: 'media-state', from, audio: message.audio, video: message.video });
      case 'screenshare-start':
        if (!settings.screenshare) return fail(session, 'screenshare-disabled', 'Screen sharing is switched off for this room', requestId);
        session.sharing = message.streamId;
        publish(session, null, { type: 'screenshare-started', from, streamId: message.streamId });
        return reply(session, { type: 'ack', requestId: message.requestId });
      case 'screenshare-stop':
        if (session.sharing === null) return;
        session.sharing = null;
        return publish(session, null, { type: 'screenshare-stopped', from });
      case 'invite-create':
        return handleInvite(session, participant, settings, message.requestId);
      case 'leave':
        session.state = 'gone';
        await markLeft(participant, session);
        reply(session, { type: 'left', requestId: message.requestId });
        return endSession(session, CloseCode.normal, 'left');
    }
  }

  async function onRoomEvent(event: RoomEvent) {
    const room = rooms.get(event.roomId);
    if (event.type === 'room-updated') {
      if (!room) return;
      const row = await participation.room(event.roomId);
      if (!row) return;
      room.settings = settingsOf(row);
      const joined = [...room.sessions].filter((s) => s.state === 'joined');
      for (const session of joined) session.connection.send({ type: 'settings', settings: room.settings });
      for (const session of joined) {
        if (!room.settings.screenshare && session.sharing !== null) {
          session.sharing = null;
          publish(session, null, { type: 'screenshare-stopped', from: session.participant!.peerId });
        }
      }
      return;
    }
    const now = clock.now().getTime();
    closedRooms.set(event.roomId, now);
    for (const [id, at] of closedRooms) if (now - at > 60_000) closedRooms.delete(id);
    if (!room) return;
    const reason = event.type === 'room-closed' ? 'closed' : 'deleted';
    const ejected = [...room.sessions];
    for (const session of ejected) {
      session.connection.send({ type: 'room-closed', reason });
      endSession(session, CloseCode.roomClosed, `room ${reason}`);
    }
    await Promise.all(ejected.map((s) => (s.participant ? markLeft(s.participant, s) : undefined)));
    log.info({ room: event.roomId, ejected: ejected.length, reason }, 'room closed: participants ejected');
  }

  const unsubscribeEvents = options.events.subscribe((event) => {
    track(onRoomEvent(event)).catch((error: unknown) => log.error({ err: error }, 'room event handling failed'));
  });

  return {
    /** A new connection: the returned handle gets its frames and its close. */
    connect(connection: Connection): SessionHandle {
      const session: Session = {
        id: randomBytes(12).toString('base64url'),
        connection,
        state: 'new',
        participant: null,
        sharing: null,
        ended: false,
        allowFrame: bucket(400, 50, clock),
        allowRefusal: bucket(100, 10, clock),
        allowChat: bucket(10, 1, clock),
        failedJoins: 0,
        joinTimer: null,
      };
      session.joinTimer = setTimeout(() => {
        if (session.state === 'new') endSession(session, CloseCode.joinTimeout, 'no join');
      }, options.joinTimeoutMs ?? 15_000);
      session.joinTimer.unref();
      open.add(session);
      options.observe?.connections(1);
      return {
        onFrame(raw) {
          if (session.state === 'gone') return;
          // Parsed before the rate check, so that a refused request still gets its one reply (with its requestId).
          const parsed = parseClientMessage(raw);
          if (!session.allowFrame()) {
            if (!session.allowRefusal()) {
              endSession(session, CloseCode.policy, 'too many messages');
              if (session.participant) void markLeft(session.participant, session);
              return;
            }
            return fail(session, 'rate-limited', 'Too many messages; slow down', requestIdOf(parsed));
          }
          if (!parsed.ok) return fail(session, parsed.code, parsed.message, parsed.requestId);
          options.observe?.message(parsed.message.type);
          track(handle(session, parsed.message)).catch((error: unknown) => {
            log.error({ err: error }, 'signaling request failed');
            fail(session, 'unavailable', 'The server could not handle this request; try again', 'requestId' in parsed.message ? parsed.message.requestId : undefined);
          });
        },
        onClose() {
          // The socket's close comes exactly once per connection, whoever ended it.
          options.observe?.connections(-1);
          open.delete(session);
          if (session.joinTimer) clearTimeout(session.joinTimer);
          const wasEnded = session.ended;
          session.ended = true;
          session.state = 'gone';
          leaveRoom(session);
          // A drop (not a leave, not an ejection): the participant is gone until it resumes.
          if (!wasEnded && session.participant) void markLeft(session.participant, session);
        },
      };
    },

    /** Connected sessions on this node (for readiness and tests of draining). */
    get size() {
      let n = 0;
      for (const room of rooms.values()) n += room.sessions.size;
      return n;
    },

    /**
     * Graceful stop: tells everyone the server is going away (1001, on which
     * browsers reconnect and resume elsewhere), records their leave, waits for
     * the database. A join still in flight is ended the same way when it lands.
     */
    async shutdown(): Promise<void> {
      unsubscribeEvents();
      const sessions = [...open];
      for (const session of sessions) endSession(session, CloseCode.goingAway, 'server restarting');
      await Promise.all(sessions.map((s) => (s.participant ? markLeft(s.participant, s) : undefined)));
      await Promise.allSettled([...pending]);
    },
  };
}

export type Hub = ReturnType<typeof createHub>;

// Builds the hub's parts for unit tests without sockets: a connection is a
// recorder of what the hub sent and how it closed it; the participation
// service is the real one over the test database (test/helpers).
import { afterAll, beforeAll } from 'vitest';
import { createTestContext, manualClock, roomBody, type TestContext } from '../../test/helpers/app.js';
import type { SignalBus } from '../domain/buses/signal-bus.js';
import type { Clock } from '../domain/support/clock.js';
import { handleJoin } from './handlers/join.js';
import type { HubContext } from './hub-context.js';
import { wiredHubContext } from './hub.js';
import type { IceServerInfo, RoomSettings, ServerMessage } from '../shared/protocol.js';
import type { RecordingsPort } from './recording-rooms.js';
import type { RoomRegistry } from './room-registry.js';
import type { SfuCalls } from './sfu-calls.js';
import { createSession, type Connection, type Session } from './session.js';

export interface RecordingConnection extends Connection {
  sent: ServerMessage[];
  closes: { code: number; reason: string }[];
  /** The messages of one type sent so far. */
  all<T extends ServerMessage['type']>(type: T): Extract<ServerMessage, { type: T }>[];
}

export function recordingConnection(): RecordingConnection {
  const sent: ServerMessage[] = [];
  const closes: { code: number; reason: string }[] = [];
  return {
    sent,
    closes,
    send: (message) => void sent.push(message),
    close: (code, reason) => void closes.push({ code, reason }),
    all: <T extends ServerMessage['type']>(type: T) => sent.filter((m) => m.type === type) as Extract<ServerMessage, { type: T }>[],
  };
}

/** A session joined to `roomId` as guest `peerId`, entered into `registry` directly (no database, no join): for the registry's own tests. */
export function registryMember(registry: Pick<RoomRegistry, 'enter'>, roomId: number, peerId: string, settings: RoomSettings, clock: Clock) {
  const connection = recordingConnection();
  const session = createSession(connection, clock);
  session.participant = { token: `token-${peerId}`, peerId, roomId, role: 'guest', name: peerId, admission: 'admitted' };
  session.state = 'joined';
  registry.enter(roomId, session, settings);
  return { session, connection };
}

export interface TestSession {
  session: Session;
  connection: RecordingConnection;
}

export type JoinedSession = TestSession & { joined: Extract<ServerMessage, { type: 'joined' }> };
export type WaitingSession = TestSession & { waiting: Extract<ServerMessage, { type: 'waiting' }> };

export interface HubFixture {
  test: TestContext;
  clock: ReturnType<typeof manualClock>;
  ctx: HubContext;
  /** A room through the API; `enable_*` and the other room fields can be overridden. */
  createRoom(overrides?: Record<string, unknown>): Promise<Record<string, any>>;
  /** The room as the API shows it (current_participants, status). */
  getRoom(roomToken: string): Promise<Record<string, any>>;
  /** A call of the rooms API with this fixture's tenant token. */
  api(method: 'GET' | 'PUT' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>): Promise<{ statusCode: number; json(): any }>;
  /** The room's row id, as the hub knows it (the API shows only its token). */
  roomIdOf(joinToken: string): Promise<number>;
  /** A connected session that has not joined. */
  connect(): TestSession;
  /** A session joined through the join handler; throws if the join was refused. */
  join(joinToken: string, displayName?: string, participantToken?: string): Promise<JoinedSession>;
  /** A session that joined through a guest link of a room with a waiting room; throws unless it waits. */
  knock(joinToken: string, displayName?: string, participantToken?: string): Promise<WaitingSession>;
  /** Sends a join and returns every reply it got (for refusals). */
  tryJoin(joinToken: string, displayName?: string, participantToken?: string): Promise<TestSession>;
  /** A room (with `overrides`) and its host and guest in the call. */
  hostAndGuest(overrides?: Record<string, unknown>): Promise<{ room: Record<string, any>; host: JoinedSession; guest: JoinedSession }>;
  /** Lets the in-process bus, the database and the handlers finish what they started. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

let nextRequest = 0;

/** A fixture for one test file: built before its first test, closed after its last. */
export function useHubFixture(options: HubFixtureOptions = {}): () => HubFixture {
  let hub: HubFixture | undefined;
  beforeAll(async () => {
    hub = await createHubFixture(options);
  });
  afterAll(() => hub?.close());
  return () => hub!;
}

export interface HubFixtureOptions {
  /** A SignalBus other than the in-process one (the Redis bus, for outages). */
  bus?: () => SignalBus;
  /** How long a dropped participant is held (default 0: a drop is a leave at once). */
  reconnectGraceMs?: number;
  /** The ICE servers a participant gets (default: one STUN server), and how often they are renewed (default never). */
  iceServersFor?: (peerId: string) => IceServerInfo[];
  iceRenewalMs?: number;
  /** The node's SFU (a fake, for what is asked of it) and recordings service, and recording's timers (handlers/recording.test.ts). */
  sfu?: () => SfuCalls;
  recordings?: (test: TestContext) => RecordingsPort;
  recordingTimes?: { consentMs?: number; renewMs?: number };
}

export async function createHubFixture(options: HubFixtureOptions = {}): Promise<HubFixture> {
  const clock = manualClock();
  const test = await createTestContext({ clock });
  const tenant = await test.tenant();
  const ctx = wiredHubContext({
    participation: test.services.participation,
    bus: options.bus?.() ?? test.services.signals,
    events: test.services.events,
    clock,
    log: test.app.log,
    publicUrl: 'http://parley.test',
    iceServersFor: options.iceServersFor ?? (() => [{ urls: 'stun:stun.test' }]),
    iceRenewalMs: options.iceRenewalMs ?? null,
    iceTransportPolicy: 'all',
    reconnectGraceMs: options.reconnectGraceMs ?? 0,
    ...(options.sfu ? { sfu: options.sfu() } : {}),
    ...(options.recordings ? { recordings: options.recordings(test) } : {}),
    ...(options.recordingTimes ? { recordingTimes: options.recordingTimes } : {}),
  });
  const fixture: HubFixture = {
    test,
    clock,
    ctx,
    async createRoom(overrides = {}) {
      const res = await test.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody(overrides) });
      if (res.statusCode !== 201) throw new Error(`room not created: ${res.statusCode} ${res.body}`);
      return res.json();
    },
    async getRoom(roomToken) {
      return (await fixture.api('GET', `/api/rooms/${roomToken}`)).json();
    },
    api(method, url, payload) {
      return test.request({ method, url, token: tenant.instanceToken, ...(payload ? { payload } : {}) });
    },
    async roomIdOf(joinToken) {
      const access = await test.services.participation.resolve(joinToken);
      if (!access) throw new Error('unknown join token');
      return access.room.id;
    },
    connect() {
      const connection = recordingConnection();
      const session = createSession(connection, clock);
      ctx.open.add(session);
      return { session, connection };
    },
    async tryJoin(joinToken, displayName = 'Someone', participantToken) {
      const { session, connection } = fixture.connect();
      const requestId = `j${++nextRequest}`;
      await handleJoin(ctx, session, { type: 'join', requestId, joinToken, displayName, ...(participantToken ? { participantToken } : {}) });
      return { session, connection };
    },
    async join(joinToken, displayName, participantToken) {
      const { session, connection } = await fixture.tryJoin(joinToken, displayName, participantToken);
      const joined = connection.all('joined')[0];
      if (!joined) throw new Error(`join refused: ${JSON.stringify(connection.sent)}`);
      return { session, connection, joined };
    },
    async knock(joinToken, displayName, participantToken) {
      const { session, connection } = await fixture.tryJoin(joinToken, displayName, participantToken);
      const waiting = connection.all('waiting')[0];
      if (!waiting) throw new Error(`not waiting: ${JSON.stringify(connection.sent)}`);
      return { session, connection, waiting };
    },
    async hostAndGuest(overrides = {}) {
      const room = await fixture.createRoom(overrides);
      const host = await fixture.join(room.access_token, 'Host');
      const guest = await fixture.join(room.guest_token, 'Guest');
      return { room, host, guest };
    },
    async settle() {
      await ctx.inFlight.settled();
      await new Promise((resolve) => setImmediate(resolve));
    },
    close: () => test.close(),
  };
  return fixture;
}

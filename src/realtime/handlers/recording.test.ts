// Recording with consent in the call (docs/design.md, "Recording with consent", "Consent in the
// call") over the real participation service: who may record, the round of
// asking, a newcomer asked, what the SFU is told to record, the lease, and
// every way a recording stops. The recordings service is a fake that keeps
// what it was asked and publishes `recording-changed` as the real one does
// (its own tests are R-store's); the SFU a fake that keeps what to record.
import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import type { RoomEventBus } from '../../domain/buses/room-event-bus.js';
import type { ActiveRecording, ConsentInput } from '../../domain/recordings/recordings.service.js';
import { dispatch } from '../dispatch.js';
import { useHubFixture, createHubFixture, type HubFixture, type TestSession } from '../hub.test-support.js';
import type { RecordingsPort } from '../recording-rooms.js';
import { connectionClosed } from '../session-handle.js';
import type { SfuCalls } from '../sfu-calls.js';
import type { ClientMessage } from '../../shared/protocol.js';
import { handleRoomEvent } from './room-events.js';

interface FakeRecording extends ActiveRecording {
  consents: ConsentInput[];
  startedBy: string;
  stopped: boolean;
  renewals: number;
}

const recordings: FakeRecording[] = [];
function fakeRecordings(events: RoomEventBus): RecordingsPort {
  const activeIn = (roomId: number) => recordings.find((r) => r.roomId === roomId && !r.stopped) ?? null;
  const view = (r: FakeRecording | null): ActiveRecording | null => (r ? { id: r.id, roomId: r.roomId, rawDir: r.rawDir, consentedPeerIds: r.consents.map((c) => c.peerId) } : null);
  return {
    async start({ roomId, startedBy, consents }) {
      if (activeIn(roomId)) throw new Error('recording already');
      const made: FakeRecording = { id: `rec${recordings.length + 1}`, roomId, rawDir: `/raw/rec${recordings.length + 1}`, consentedPeerIds: [], consents, startedBy, stopped: false, renewals: 0 };
      recordings.push(made);
      events.publish({ type: 'recording-changed', roomId });
      return view(made)!;
    },
    async addConsent(id, consent) {
      const r = recordings.find((x) => x.id === id && !x.stopped);
      if (!r) throw new Error('not recording');
      r.consents.push(consent);
      events.publish({ type: 'recording-changed', roomId: r.roomId });
    },
    active: async (roomId) => view(activeIn(roomId)),
    async stop(id) {
      const r = recordings.find((x) => x.id === id)!;
      if (r.stopped) return;
      r.stopped = true;
      events.publish({ type: 'recording-changed', roomId: r.roomId });
    },
    async renew(id) {
      const r = recordings.find((x) => x.id === id && !x.stopped);
      if (!r) throw new Error('not recording');
      r.renewals++;
    },
  };
}

/** What the SFU was told to record, per peer id (the last word: a base, or null). */
const recordedAs = new Map<string, string | null>();
/** Who listens for a room whose Janus was lost and that no instance took (the hub). */
const roomLostListeners: ((roomId: number) => void)[] = [];
const fakeSfu = (): SfuCalls =>
  ({
    entry: { minParticipants: 3, warm: false },
    record: async (session, base) => void recordedAs.set(session.participant!.peerId, base),
    onRoomLost: (listener) => void roomLostListeners.push(listener),
    leave: async () => {},
    roomGone: async () => {},
    close: async () => {},
  }) as Partial<SfuCalls> as SfuCalls;

function withRecording(options: { sfu?: boolean; consentMs?: number } = {}) {
  return {
    ...(options.sfu === false ? {} : { sfu: fakeSfu }),
    recordings: (test: HubFixture['test']) => fakeRecordings(test.services.events),
    recordingTimes: { consentMs: options.consentMs ?? 60_000, renewMs: 50 },
  };
}

const hub = useHubFixture(withRecording());
let nextId = 0;
let listening = false;

async function send(on: HubFixture, who: TestSession, message: ClientMessage) {
  const before = who.connection.sent.length;
  await dispatch(on.ctx, who.session, message);
  await on.settle();
  await on.settle();
  return who.connection.sent.slice(before).find((m) => 'requestId' in m && m.requestId === (message as { requestId?: string }).requestId);
}
const start = (who: TestSession, on = hub()) => send(on, who, { type: 'recording-start', requestId: `s${++nextId}` });
const stop = (who: TestSession, on = hub()) => send(on, who, { type: 'recording-stop', requestId: `t${++nextId}` });
const lastAsk = (who: TestSession) => who.connection.all('recording-consent-request').at(-1);
const answer = (who: TestSession, accepted: boolean) => send(hub(), who, { type: 'recording-consent', requestId: `c${++nextId}`, askId: lastAsk(who)!.askId, accepted });
const lastState = (who: TestSession) => who.connection.all('recording-state').at(-1);

/** A room that allows recording (the column of migration 0017; the API's setting is R-store's), with the room events reaching this hub. */
async function recordingRoom(on: HubFixture, overrides: Record<string, unknown> = {}) {
  if (!listening && on === hub()) {
    listening = true;
    on.test.services.events.subscribe((event) => void on.ctx.inFlight.track(handleRoomEvent(on.ctx, event)));
  }
  const room = await on.createRoom(overrides);
  const id = await on.roomIdOf(room.access_token);
  await sql`UPDATE rooms SET enable_recording = true WHERE id = ${id}`.execute(on.test.services.database.db);
  return { room, id };
}

async function recordingCall() {
  const { room, id } = await recordingRoom(hub());
  const host = await hub().join(room.access_token, 'Dr Grey');
  const guest = await hub().join(room.guest_token, 'Pat');
  await hub().settle();
  return { room, id, host, guest };
}

describe('who may record', () => {
  it('tells the pages of a room that allows recording so when they enter, and nothing in other rooms', async () => {
    const { host, guest } = await recordingCall();
    expect(lastState(host)).toEqual({ type: 'recording-state', enabled: true, state: 'idle', recorded: [] });
    expect(lastState(guest)).toEqual({ type: 'recording-state', enabled: true, state: 'idle', recorded: [] });
    const other = await hub().hostAndGuest();
    expect(other.host.connection.all('recording-state')).toEqual([]);
  });

  it('refuses a guest, a room without enable_recording, and a server without an SFU, each with its code', async () => {
    const { guest } = await recordingCall();
    expect(await start(guest)).toMatchObject({ type: 'error', code: 'forbidden' });
    expect(await stop(guest)).toMatchObject({ type: 'error', code: 'forbidden' });
    const plain = await hub().hostAndGuest();
    expect(await start(plain.host)).toMatchObject({ type: 'error', code: 'recording-disabled' });

    const noSfu = await createHubFixture(withRecording({ sfu: false }));
    try {
      const { room } = await recordingRoom(noSfu);
      const host = await noSfu.join(room.access_token, 'Host');
      expect(await start(host, noSfu)).toMatchObject({ type: 'error', code: 'recording-unavailable' });
    } finally {
      await noSfu.close();
    }
  });
});

describe('the round of asking', () => {
  it('starts only once everyone accepted, records everyone who consented, and every page shows it', async () => {
    const { id, host, guest } = await recordingCall();
    expect(await start(host)).toMatchObject({ type: 'ack' });
    expect(lastAsk(guest)).toMatchObject({ by: 'Dr Grey' });
    // The host pressed record: nobody asks the host.
    expect(host.connection.all('recording-consent-request')).toEqual([]);
    expect(lastState(guest)).toMatchObject({ state: 'asking' });
    expect(recordings.filter((r) => r.roomId === id)).toEqual([]);
    // Asking twice is refused while the first request is under way.
    expect(await start(host)).toMatchObject({ type: 'error', code: 'recording-busy' });

    expect(await answer(guest, true)).toMatchObject({ type: 'ack' });
    const made = recordings.find((r) => r.roomId === id)!;
    expect(made.startedBy).toBe('Dr Grey');
    expect(made.consents.map((c) => [c.displayName, c.role])).toEqual([
      ['Dr Grey', 'host'],
      ['Pat', 'guest'],
    ]);
    const both = [host.joined.self.id, guest.joined.self.id];
    for (const page of [host, guest]) expect(lastState(page)).toEqual({ type: 'recording-state', enabled: true, state: 'recording', recorded: both });
    for (const peerId of both) expect(recordedAs.get(peerId)).toBe(`${made.rawDir}/${peerId}`);

    // The lease is renewed while the node has someone in the room.
    await vi.waitFor(() => expect(made.renewals).toBeGreaterThanOrEqual(2), { timeout: 10_000 });

    expect(await stop(host)).toMatchObject({ type: 'ack' });
    expect(made.stopped).toBe(true);
    for (const page of [host, guest]) expect(lastState(page)).toMatchObject({ state: 'idle', recorded: [] });
    for (const peerId of both) expect(recordedAs.get(peerId)).toBeNull();
  });

  it('tells the host who declined, and records nothing', async () => {
    const { id, host, guest } = await recordingCall();
    await start(host);
    await answer(guest, false);
    expect(host.connection.all('recording-declined')).toEqual([{ type: 'recording-declined', names: ['Pat'] }]);
    expect(guest.connection.all('recording-declined')).toEqual([]);
    expect(recordings.filter((r) => r.roomId === id)).toEqual([]);
    for (const page of [host, guest]) expect(lastState(page)).toMatchObject({ state: 'idle' });
    expect(recordedAs.get(guest.joined.self.id) ?? null).toBeNull();
  });

  it('counts only who is still in the call: someone who leaves before answering does not hold it up', async () => {
    const { id, room, host, guest } = await recordingCall();
    const other = await hub().join(room.guest_token, 'Sam');
    await start(host);
    await answer(guest, true);
    expect(recordings.filter((r) => r.roomId === id)).toEqual([]);
    connectionClosed(hub().ctx, other.session);
    await hub().settle();
    await vi.waitFor(() => expect(recordings.filter((r) => r.roomId === id)).toHaveLength(1), { timeout: 10_000 });
    expect(recordings.find((r) => r.roomId === id)!.consents.map((c) => c.displayName)).toEqual(['Dr Grey', 'Pat']);
  });

  it('counts who has not answered in time as declining', async () => {
    const { id, room, host, guest } = await recordingCall();
    await hub().join(room.guest_token, 'Sam');
    // The round's 60 s on fake timers (setTimeout only: the database's own timers run), so that a
    // loaded machine cannot run it out before the answers, and the test need not wait for it.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await start(host);
      await answer(guest, true);
      expect(host.connection.all('recording-declined')).toEqual([]);
      vi.advanceTimersByTime(59_999);
      await hub().settle();
      expect(host.connection.all('recording-declined')).toEqual([]);
      vi.advanceTimersByTime(1);
    } finally {
      vi.useRealTimers();
    }
    await vi.waitFor(() => expect(host.connection.all('recording-declined')).toEqual([{ type: 'recording-declined', names: ['Sam'] }]), { timeout: 15_000 });
    expect(recordings.filter((r) => r.roomId === id)).toEqual([]);
  });

  it('asks again, the same question, whoever comes back (a reload) during the round before answering', async () => {
    // A reload is a drop within the reconnect grace, not a leave: the round still waits for this guest.
    const graced = await createHubFixture({ ...withRecording(), reconnectGraceMs: 60_000 });
    try {
      const { room, id } = await recordingRoom(graced);
      const host = await graced.join(room.access_token, 'Dr Grey');
      const guest = await graced.join(room.guest_token, 'Pat');
      await graced.settle();
      await start(host, graced);
      const asked = lastAsk(guest)!;
      connectionClosed(graced.ctx, guest.session);
      await graced.settle();
      const back = await graced.join(room.guest_token, 'Pat', guest.joined.participantToken);
      expect(back.joined.resumed).toBe(true);
      await vi.waitFor(() => expect(lastAsk(back)).toEqual(asked), { timeout: 10_000 });
      expect(lastState(back)).toMatchObject({ state: 'asking' });
      expect(host.connection.all('recording-consent-request')).toEqual([]);
      await send(graced, back, { type: 'recording-consent', requestId: `c${++nextId}`, askId: asked.askId, accepted: true });
      await vi.waitFor(() => expect(recordings.filter((r) => r.roomId === id)).toHaveLength(1), { timeout: 10_000 });
      expect(recordings.find((r) => r.roomId === id)!.consents.map((c) => c.displayName)).toEqual(['Dr Grey', 'Pat']);
      expect(host.connection.all('recording-declined')).toEqual([]);
    } finally {
      await graced.close();
    }
  });

  it('withdraws the request when the host leaves during it', async () => {
    const { id, host, guest } = await recordingCall();
    await start(host);
    connectionClosed(hub().ctx, host.session);
    await hub().settle();
    await vi.waitFor(() => expect(lastState(guest)).toMatchObject({ state: 'idle' }), { timeout: 10_000 });
    await answer(guest, true);
    expect(recordings.filter((r) => r.roomId === id)).toEqual([]);
  });
});

describe('during a recording', () => {
  async function recording() {
    const call = await recordingCall();
    await start(call.host);
    await answer(call.guest, true);
    const made = recordings.find((r) => r.roomId === call.id)!;
    expect(made).toBeDefined();
    return { ...call, made };
  }

  it('asks a newcomer, records it only once it accepted', async () => {
    const { room, host, made } = await recording();
    const newcomer = await hub().join(room.guest_token, 'Sam');
    await hub().settle();
    expect(lastAsk(newcomer)).toMatchObject({ by: 'Dr Grey' });
    expect(lastState(newcomer)).toMatchObject({ state: 'recording' });
    expect(recordedAs.get(newcomer.joined.self.id)).toBeNull();
    await answer(newcomer, true);
    await hub().settle();
    expect(made.consents.map((c) => c.displayName)).toEqual(['Dr Grey', 'Pat', 'Sam']);
    expect(recordedAs.get(newcomer.joined.self.id)).toBe(`${made.rawDir}/${newcomer.joined.self.id}`);
    expect(lastState(host)!.recorded).toContain(newcomer.joined.self.id);
  });

  it('asks a newcomer back before answering (a reload) the same question again', async () => {
    const { room, made } = await recording();
    const newcomer = await hub().join(room.guest_token, 'Sam');
    await hub().settle();
    const asked = lastAsk(newcomer)!;
    connectionClosed(hub().ctx, newcomer.session);
    await hub().settle();
    const back = await hub().join(room.guest_token, 'Sam', newcomer.joined.participantToken);
    await hub().settle();
    expect(back.joined.resumed).toBe(true);
    expect(lastAsk(back)).toEqual(asked);
    await answer(back, true);
    expect(made.consents.map((c) => c.displayName)).toEqual(['Dr Grey', 'Pat', 'Sam']);
  });

  it('keeps a newcomer who declines in the call, unrecorded, and tells the host', async () => {
    const { room, host, made } = await recording();
    const newcomer = await hub().join(room.guest_token, 'Sam');
    await hub().settle();
    await answer(newcomer, false);
    expect(host.connection.all('recording-declined')).toEqual([{ type: 'recording-declined', names: ['Sam'] }]);
    expect(made.consents.map((c) => c.displayName)).toEqual(['Dr Grey', 'Pat']);
    expect(recordedAs.get(newcomer.joined.self.id)).toBeNull();
    expect(newcomer.session.state).toBe('joined');
    // Asked once per recording: a change of the recording does not ask again.
    await hub().test.services.events.publish({ type: 'recording-changed', roomId: made.roomId });
    await hub().settle();
    expect(newcomer.connection.all('recording-consent-request')).toHaveLength(1);
  });

  it('stops when the last host leaves', async () => {
    const { host, guest, made } = await recording();
    connectionClosed(hub().ctx, host.session);
    await vi.waitFor(() => expect(made.stopped).toBe(true), { timeout: 10_000 });
    await vi.waitFor(() => expect(lastState(guest)).toMatchObject({ state: 'idle' }), { timeout: 10_000 });
  });

  it('stops when no Janus took the room after its own was lost, and every page hears it', async () => {
    const { host, guest, made } = await recording();
    // The hub of this test registered last.
    roomLostListeners.at(-1)!(made.roomId);
    await vi.waitFor(() => expect(made.stopped).toBe(true), { timeout: 10_000 });
    for (const page of [host, guest]) await vi.waitFor(() => expect(lastState(page)).toMatchObject({ state: 'idle', recorded: [] }), { timeout: 10_000 });
    for (const page of [host, guest]) expect(recordedAs.get(page.joined.self.id)).toBeNull();
  });

  it('stops when the room is closed', async () => {
    const { room, made } = await recording();
    expect((await hub().api('POST', `/api/rooms/${room.token}/close`)).statusCode).toBe(204);
    await vi.waitFor(() => expect(made.stopped).toBe(true), { timeout: 10_000 });
  });
});


// Presence and the room lifecycle that follows from it (docs/design.md#room-lifecycle), with
// one-second graces: abrupt disconnects, resuming, ending, restarting, dead nodes.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createParticipationService, MAX_PARTICIPANTS } from '../../src/domain/participation/participation.service.js';
import { eventually, sleep } from '../helpers/wait.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';

let server: RealtimeServer;

beforeAll(async () => {
  server = await startRealtimeServer({ ROOM_END_GRACE_SECONDS: '1', RECONNECT_GRACE_SECONDS: '1', NODE_DEAD_AFTER_SECONDS: '2' });
});
afterAll(() => server.close());

const participantsOf = async (roomToken: string): Promise<string[]> => (await server.getRoom(roomToken)).current_participants;

describe('presence', () => {
  it('holds a participant whose connection dies abruptly for the reconnect grace, then drops it and tells the others', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    const guest = await server.connect();
    const h = await host.join(room.access_token);
    const g = await guest.join(room.guest_token);
    // The grace runs on timers of the test's own (setTimeout only; the heartbeat's interval stays real):
    // on the real clock a loaded machine's stall (1-3 s) lets the one-second grace pass before the check.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      guest.terminate();
      expect(await host.next('peer-reconnecting')).toEqual({ type: 'peer-reconnecting', peerId: g.self.id });
      expect(await participantsOf(room.token)).toEqual([h.participantToken, g.participantToken]);
      await vi.advanceTimersByTimeAsync(1100); // the grace is over
      expect(await host.next('peer-left')).toEqual({ type: 'peer-left', peerId: g.self.id });
    } finally {
      vi.useRealTimers();
    }
    expect(await participantsOf(room.token)).toEqual([h.participantToken]);
  });

  it('notices a silent dead connection (no close frame, no FIN) through missed pongs', async () => {
    const room = await server.createRoom();
    const guest = await server.connect();
    await guest.join(room.guest_token);
    // Stop answering pings without closing: what a sleeping laptop looks like from the server.
    guest.socket.pong = () => {};
    (guest.socket as unknown as { _receiver: { removeAllListeners(e: string): void } })._receiver.removeAllListeners('ping');
    // Two silent intervals (1 s), terminated at the third, then the one-second reconnect grace.
    await eventually(async () => (await participantsOf(room.token)).length === 0, 30_000, 'dead connection dropped');
  });

  /**
   * A host and a guest in a call whose guest's pongs come `pongDelayMs` late (as over a
   * thin link with its queue full of media), sending `{type: 'ping'}` every `pingEveryMs`
   * meanwhile (the page's own heartbeat, web/src/signaling.ts) or nothing (0), for 4 s:
   * four intervals of the server's heartbeat (1 s here).
   */
  async function slowGuest(pongDelayMs: number, pingEveryMs: number) {
    const room = await server.createRoom();
    const host = await server.connect();
    const guest = await server.connect();
    await host.join(room.access_token);
    await guest.join(room.guest_token);
    const pong = guest.socket.pong.bind(guest.socket);
    guest.socket.pong = ((data?: unknown) => void setTimeout(() => guest.socket.readyState === guest.socket.OPEN && pong(data), pongDelayMs)) as typeof pong;
    const pinging = pingEveryMs > 0 ? setInterval(() => guest.send({ type: 'ping' }), pingEveryMs) : undefined;
    await sleep(4000);
    clearInterval(pinging);
    return { host, guest, roomToken: room.token };
  }

  it('keeps a connection whose pongs come later than an interval, as over a thin link', async () => {
    const { host, guest, roomToken } = await slowGuest(1500, 0);
    expect(guest.socket.readyState).toBe(guest.socket.OPEN);
    expect(host.all('peer-reconnecting')).toEqual([]);
    expect(await participantsOf(roomToken)).toHaveLength(2);
    guest.terminate();
  });

  it('keeps a connection that answers no ping while its own frames keep coming', async () => {
    const { host, guest } = await slowGuest(60_000, 500);
    expect(guest.socket.readyState).toBe(guest.socket.OPEN);
    expect(host.all('peer-reconnecting')).toEqual([]);
    guest.terminate();
  });

  it('leaves on request: one reply, then the socket closes normally', async () => {
    const room = await server.createRoom();
    const guest = await server.connect();
    await guest.join(room.guest_token);
    expect(await guest.request({ type: 'leave' })).toMatchObject({ type: 'left' });
    expect((await guest.closed).code).toBe(1000);
    expect(await participantsOf(room.token)).toEqual([]);
  });

  it('refuses a join beyond the mesh limit', async () => {
    const room = await server.createRoom();
    for (let i = 0; i < MAX_PARTICIPANTS; i++) await (await server.connect()).join(room.guest_token, `P${i}`);
    const extra = await server.connect();
    expect(await extra.request({ type: 'join', joinToken: room.guest_token, displayName: 'One too many' })).toMatchObject({
      type: 'error',
      code: 'room-full',
    });
    expect(await participantsOf(room.token)).toHaveLength(MAX_PARTICIPANTS);
  });
});

describe('resuming', () => {
  it('resumes the same participant after a drop within the grace; a stale token gets a new participant', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    await host.join(room.access_token, 'Host');
    const first = await server.connect();
    const g = await first.join(room.guest_token, 'Guest');
    // The graces run on timers of the test's own (setTimeout only), as in the first test: on the real
    // clock a stall longer than the one-second grace would drop the guest before it comes back.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let again: Awaited<ReturnType<typeof server.connect>>;
    try {
      first.terminate();
      await host.next('peer-reconnecting');
      again = await server.connect();
      const resumed = await again.join(room.guest_token, 'Guest', g.participantToken);
      expect(resumed.resumed).toBe(true);
      expect(resumed.participantToken).toBe(g.participantToken);
      expect(resumed.self.id).toBe(g.self.id);
      expect((await host.next('peer-joined')).peer.id).toBe(g.self.id);
      expect((await participantsOf(room.token)).sort()).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(1200); // past the first grace: no leave comes
      expect(host.all('peer-left')).toEqual([]);

      again.terminate();
      await host.next('peer-reconnecting'); // the drop is noticed: its grace has begun
      await vi.advanceTimersByTimeAsync(1100); // and runs out
      await host.next('peer-left');
    } finally {
      vi.useRealTimers();
    }
    await sleep(1100);
    const late = await server.connect();
    const fresh = await late.join(room.guest_token, 'Guest', g.participantToken);
    expect(fresh.resumed).toBe(false);
    expect(fresh.participantToken).not.toBe(g.participantToken);
  });

  it('takes over from a connection that is not known to be dead yet, without a leave in between', async () => {
    const room = await server.createRoom();
    const host = await server.connect();
    await host.join(room.access_token);
    const old = await server.connect();
    const g = await old.join(room.guest_token);
    const fresh = await server.connect();
    await fresh.join(room.guest_token, 'Guest', g.participantToken);
    expect((await old.closed).code).toBe(4002);
    await sleep(200);
    expect(host.all('peer-left')).toEqual([]);
    expect(await participantsOf(room.token)).toContain(g.participantToken);
  });

  it('cannot resume a participant of another room', async () => {
    const roomA = await server.createRoom();
    const roomB = await server.createRoom();
    const a = await server.connect();
    const ga = await a.join(roomA.guest_token);
    const b = await server.connect();
    const joined = await b.join(roomB.guest_token, 'B', ga.participantToken);
    expect(joined.resumed).toBe(false);
    expect(joined.participantToken).not.toBe(ga.participantToken);
    expect(await participantsOf(roomA.token)).toEqual([ga.participantToken]);
  });
});

describe('lifecycle', () => {
  it('active -> started on the first join; ended after the grace once empty; started again on a rejoin', async () => {
    const room = await server.createRoom();
    expect(room.status).toBe('active');
    const guest = await server.connect();
    await guest.join(room.guest_token);
    const started = await server.getRoom(room.token);
    expect(started.status).toBe('started');
    await guest.request({ type: 'leave' });

    // Within the grace the room stays started, even when the sweep runs.
    await server.services.participation.sweep();
    expect((await server.getRoom(room.token)).status).toBe('started');
    await sleep(1100);
    await server.services.participation.sweep();
    const ended = await server.getRoom(room.token);
    expect(ended.status).toBe('ended');
    expect(ended.ended_at).toBeDefined();
    expect(Date.parse(ended.ended_at)).toBeGreaterThanOrEqual(Date.parse(started.started_at));

    const back = await server.connect();
    await back.join(room.access_token);
    const restarted = await server.getRoom(room.token);
    expect(restarted.status).toBe('started');
    expect(restarted.started_at).toBe(started.started_at);
  });

  it('does not end a room when a participant reconnects within the grace', async () => {
    const room = await server.createRoom();
    const first = await server.connect();
    const g = await first.join(room.guest_token);
    // The room's version (its ETag) moves when it ends and again when a rejoin starts it: a room that
    // ended for a moment and started again would still say `started`, but not with this version.
    const versionOf = async () => ((await server.api('GET', `/api/rooms/${room.token}`)) as unknown as { headers: Record<string, string> }).headers.etag;
    const before = await versionOf();
    first.terminate();
    await eventually(async () => (await participantsOf(room.token)).length === 0, 10_000, 'drop noticed');
    const again = await server.connect();
    await again.join(room.guest_token, 'Guest', g.participantToken);
    // Past the 1 s grace since the drop (a sleep that proves an absence: the room did not end).
    await sleep(1100);
    await server.services.participation.sweep();
    expect((await server.getRoom(room.token)).status).toBe('started');
    expect(await versionOf()).toBe(before);
  });

  /** A guest in a new room, as if connected through another node whose last heartbeat was 10 s ago. */
  async function guestOfSilentNode(nodeId: string) {
    const room = await server.createRoom();
    const guest = await server.connect();
    const g = await guest.join(room.guest_token);
    const db = server.services.database.db;
    await sql`insert into nodes (id, started_at, heartbeat_at) values (${nodeId}, now() - interval '1 minute', now() - interval '10 seconds')`.execute(db);
    await sql`update participants set node_id = ${nodeId} where token = ${g.participantToken}`.execute(db);
    return { room, participantToken: g.participantToken };
  }

  it('marks the participants of a node that stopped its heartbeat as left, and ends their room', async () => {
    // The other node died 10 s ago.
    const { room } = await guestOfSilentNode('ghost');
    await server.services.participation.sweep();
    expect(await participantsOf(room.token)).toEqual([]);
    await sleep(1100);
    await server.services.participation.sweep();
    expect((await server.getRoom(room.token)).status).toBe('ended');
  });

  it('after the database was away, gives other nodes NODE_DEAD_AFTER_SECONDS to beat again before marking their participants left', async () => {
    // The other node's last beat is 10 s old because the database was away for every node, this one included.
    const { room, participantToken } = await guestOfSilentNode('paused');
    const { repos, feedback, clock, ids } = server.services;
    let away = true;
    const repo = { ...repos.participants, heartbeat: (id: string, now: Date) => (away ? Promise.reject(new Error('connect ECONNREFUSED')) : repos.participants.heartbeat(id, now)) };
    const survivor = createParticipationService({ repo, rooms: repos.rooms, tenants: repos.tenants, feedback, clock, ids, nodeId: 'survivor', roomEndGraceSeconds: 1, nodeDeadAfterSeconds: 2 });
    await expect(survivor.sweep()).rejects.toThrow('ECONNREFUSED');
    away = false;
    await survivor.sweep();
    expect(await participantsOf(room.token)).toEqual([participantToken]);
    // The paused node never beats again: dead once NODE_DEAD_AFTER_SECONDS have passed since the database came back.
    await sleep(2100);
    await survivor.sweep();
    expect(await participantsOf(room.token)).toEqual([]);
    await sql`delete from nodes where id in ('paused', 'survivor')`.execute(server.services.database.db);
  });

  it('keeps participants of live nodes when the sweep runs on every node at once', async () => {
    const room = await server.createRoom();
    const guest = await server.connect();
    const g = await guest.join(room.guest_token);
    await Promise.all([server.services.participation.sweep(), server.services.participation.sweep(), server.services.participation.sweep()]);
    expect(await participantsOf(room.token)).toEqual([g.participantToken]);
  });
});

// Janus's faults besides a death (docs/design.md, "Group calls through an
// SFU", Faults), against real Janus processes: one that stops answering
// (frozen with SIGSTOP) is noticed within the client's bound and its rooms
// move to another instance, and once let go (SIGCONT) the old Janus loses the
// VideoRoom moved off it and changes nothing else; a local Janus that stops answering is killed and started again; a
// room's VideoRoom goes once its call has ended for SFU_EMPTY_ROOM_SECONDS, and
// not while someone is still in it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRoom } from '../helpers/api.js';
import { ADMIN_TOKEN, createTestContext, type TestContext } from '../helpers/app.js';
import { publisherOffer, startOperatorJanus, startTestJanus, type OperatorJanus } from '../helpers/janus.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';
import { eventually, sleep } from '../helpers/wait.js';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { HUNG_AFTER_MS, startLocalJanus, type LocalJanus } from '../../src/local-janus.js';
import { openJanusSession, REQUEST_TIMEOUT_MS } from '../../src/sfu/janus-client.js';
import type { SfuPin } from '../../src/domain/sfu/sfu-rooms.repo.js';
import { createJanusInstances, type JanusInstances } from '../../src/sfu/janus-instances.js';
import { joinAsPublisher, videoRoomExists } from '../../src/sfu/video-room.js';

let ctx: TestContext;
let token: string;
const instances: JanusInstances[] = [];
const frozen = new Set<number>();

async function roomId(): Promise<number> {
  const room = await createRoom(ctx, token);
  const row = await ctx.services.database.db.selectFrom('rooms').select('id').where('token', '=', room.token).executeTakeFirstOrThrow();
  return Number(row.id);
}

function node(urls: string[], apiSecret: string): JanusInstances {
  const made = createJanusInstances({ urls, apiSecret, repo: ctx.services.repos.sfuRooms, clock: ctx.services.clock });
  instances.push(made);
  return made;
}

const freeze = (pid: number) => {
  process.kill(pid, 'SIGSTOP');
  frozen.add(pid);
};
const letGo = (pid: number) => {
  process.kill(pid, 'SIGCONT');
  frozen.delete(pid);
};

async function exists(url: string, apiSecret: string, pin: { janusRoom: number; secret: string }): Promise<boolean> {
  const session = await openJanusSession(url, apiSecret);
  try {
    return await videoRoomExists(session, pin);
  } finally {
    await session.destroy();
  }
}

beforeAll(async () => {
  ctx = await createTestContext();
  token = (await ctx.tenant()).instanceToken;
}, 60_000);

afterAll(async () => {
  // A test that failed half-way must not leave a Janus stopped for good.
  for (const pid of frozen) letGo(pid);
  await Promise.all(instances.map((made) => made.close()));
  await ctx?.close();
});

describe('a JANUS_URLS instance that stops answering', () => {
  let a: OperatorJanus;
  let b: OperatorJanus;
  beforeAll(async () => {
    [a, b] = await Promise.all([startOperatorJanus(), startOperatorJanus()]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('is noticed within the bound, its rooms move to the other, and once let go it loses the VideoRoom moved off it and changes nothing else', async () => {
    const made = node([a.url, b.url], a.apiSecret);
    const id = await roomId();
    const pin = await made.room(id);
    const [failed, other] = pin.instance === a.url ? [a, b] : [b, a];
    const session = await made.session(failed.url);
    const publisher = await joinAsPublisher(session, pin, 'peer-a/camera', () => {});
    await publisher.publish({ type: 'offer', sdp: publisherOffer() });
    const lost: { instance: string; at: number }[] = [];
    made.onLost((instance) => lost.push({ instance, at: Date.now() }));

    const frozenAt = Date.now();
    freeze(failed.pid);
    await eventually(() => lost.length > 0, 30_000, 'the frozen instance noticed');
    const noticedMs = lost[0]!.at - frozenAt;
    console.log(`[sfu] a frozen Janus noticed after ${noticedMs} ms (bound: a keepalive every 250 ms unanswered for ${REQUEST_TIMEOUT_MS} ms)`);
    expect(lost.map((entry) => entry.instance)).toEqual([failed.url]);
    // The bound is the behaviour: the long poll alone would wait 40 s. A keepalive
    // every 250 ms unanswered for 2.5 s notices within 2.75 s; 15 s is far above that on a loaded machine.
    expect(noticedMs).toBeLessThan(15_000);

    const moved = (await made.move(pin))!;
    expect(moved.instance).toBe(other.url);
    expect(await exists(other.url, other.apiSecret, moved)).toBe(true);
    // A new room is not given to the frozen instance either (it would be the least loaded now).
    const next = await made.room(await roomId());
    expect(next.instance).toBe(other.url);

    // Let go: the zombie answers its old poll and requests, and nothing moves back or is lost again.
    letGo(failed.pid);
    await eventually(async () => (await openJanusSession(failed.url, failed.apiSecret).then((s) => s.destroy().then(() => true))) === true, 15_000, 'the old Janus answering');
    // The VideoRoom moved off it is destroyed once it answers (tried every 5 s), not left until it restarts.
    await eventually(async () => !(await exists(failed.url, failed.apiSecret, pin)), 20_000, 'the VideoRoom moved off the old Janus destroyed');
    expect(await exists(other.url, other.apiSecret, moved)).toBe(true);
    // A wait proves only that nothing happens: the zombie's buffered answers arrive within it.
    await sleep(2000);
    expect(lost).toHaveLength(1);
    expect(await ctx.services.repos.sfuRooms.find(id)).toEqual(moved);
    expect(await made.room(id)).toEqual(moved);
  }, 90_000);
});

/** A local Janus on ports of its own whose stopped state is not looked up: frozen, it is a hang the kernel does not show. */
async function startHangingJanus(): Promise<LocalJanus> {
  const ports = 51_000 + (process.pid % 40) * 5;
  const config = loadConfig({ SFU: 'janus', JANUS_API_SECRET: 'test-janus-secret', JANUS_RTP_PORTS: `${ports}-${ports + 4}`, LOG_LEVEL: 'silent' });
  return startLocalJanus(config, pino({ level: 'silent' }), { watchStopped: false });
}

describe.each([
  { what: 'frozen (the kernel shows it stopped)', start: () => startTestJanus(), replaced: (ms: number) => expect(ms).toBeLessThan(HUNG_AFTER_MS) },
  { what: 'hung (frozen, not looked up: the bound)', start: startHangingJanus, replaced: (ms: number) => expect(ms).toBeGreaterThanOrEqual(HUNG_AFTER_MS - 300) },
])('a local Janus $what', ({ start, replaced }) => {
  let janus: LocalJanus;
  beforeAll(async () => {
    janus = await start();
  }, 60_000);
  afterAll(async () => {
    await janus?.stop();
  });

  it('is killed and started again, and its rooms are recreated on the next use', async () => {
    const made = node([janus.url], janus.apiSecret);
    const id = await roomId();
    const pin = await made.room(id);
    const lost: number[] = [];
    made.onLost(() => lost.push(Date.now()));
    const before = janus.pid!;
    const frozenAt = Date.now();
    freeze(before);
    await eventually(() => janus.pid !== before, 20_000, 'a new janus');
    const replacedMs = Date.now() - frozenAt;
    frozen.delete(before);
    await janus.whenUp();
    console.log(`[sfu] a frozen local Janus replaced after ${replacedMs} ms, up again after ${Date.now() - frozenAt} ms`);
    // Stopped: killed on the second look (0.25 to 0.5 s), well before the bound. Hung: not before the bound.
    replaced(replacedMs);
    // The frozen one is gone, not left stopped behind.
    await eventually(() => !processExists(before), 10_000, 'the frozen janus gone');
    await eventually(() => lost.length > 0, 15_000, 'the node noticed');
    const moved = (await made.move(pin))!;
    const again = await made.room(id);
    expect(again).toEqual(moved);
    expect(await exists(janus.url, janus.apiSecret, again)).toBe(true);
  }, 60_000);
});

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('a room whose call ended', () => {
  let janus: OperatorJanus;
  let server: RealtimeServer;
  beforeAll(async () => {
    janus = await startOperatorJanus();
    server = await startRealtimeServer({ SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret, SFU_EMPTY_ROOM_SECONDS: '2', PARLEY_ADMIN_TOKEN: ADMIN_TOKEN });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await janus?.stop();
  });

  const pinOf = async (roomToken: string) => {
    const row = await server.services.database.db.selectFrom('rooms').select('id').where('token', '=', roomToken).executeTakeFirstOrThrow();
    return server.services.repos.sfuRooms.find(Number(row.id));
  };
  const roomsOnJanus = async () => (await server.services.repos.sfuRooms.all()).find((entry) => entry.instance === janus.url)?.rooms ?? 0;

  it('keeps its VideoRoom while someone is in it, and loses it and its pin once everyone has left for SFU_EMPTY_ROOM_SECONDS', async () => {
    const room = await server.createRoom();
    const [host, guest] = [await server.connect(), await server.connect()];
    await host.join(room.access_token, 'Dr. Ada');
    await guest.request({ type: 'join', joinToken: room.guest_token, displayName: 'Pat' });
    for (const client of [host, guest]) expect(await client.request({ type: 'sfu-publish', kind: 'camera', offer: publisherOffer() })).toMatchObject({ type: 'sfu-answer' });
    const pin = (await pinOf(room.token))!;
    const pinned = await roomsOnJanus();
    expect(pinned).toBeGreaterThan(0);

    guest.terminate();
    // Longer than SFU_EMPTY_ROOM_SECONDS: the room stays, as the host is still in it.
    await sleep(3500);
    expect(await pinOf(room.token)).toEqual(pin);
    expect(await exists(janus.url, janus.apiSecret, pin)).toBe(true);

    host.terminate();
    await eventually(async () => (await pinOf(room.token)) === null, 20_000, 'the pin gone');
    expect(await exists(janus.url, janus.apiSecret, pin)).toBe(false);
    // What `parley admin sfu list` shows: one room fewer on the instance.
    expect(await roomsOnJanus()).toBe(pinned - 1);
    const view = await server.app.inject({ method: 'GET', url: '/admin/sfu', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(view.json().instances).toEqual([{ url: janus.url, configured: true, answers: true, rooms: pinned - 1 }]);

    // The call starts again: a fresh VideoRoom.
    const back = await server.connect();
    await back.join(room.access_token, 'Dr. Ada');
    expect(await back.request({ type: 'sfu-publish', kind: 'camera', offer: publisherOffer() })).toMatchObject({ type: 'sfu-answer' });
    const fresh = (await pinOf(room.token))!;
    expect(fresh.janusRoom).not.toBe(pin.janusRoom);
    expect(await exists(janus.url, janus.apiSecret, fresh)).toBe(true);
    back.terminate();
  }, 60_000);

  it('loses the VideoRoom of a call whose last participant was on a node that died, and keeps one whose participant is still there', async () => {
    // The dead node: its own instances made the VideoRooms; the survivors marked its participants left.
    const dead = createJanusInstances({ urls: [janus.url], apiSecret: janus.apiSecret, repo: server.services.repos.sfuRooms, clock: server.services.clock });
    instances.push(dead);
    const db = server.services.database.db;
    const [ended, ongoing] = [await server.createRoom(), await server.createRoom()];
    const pins = [];
    // The ongoing call's participant is on a node that still beats (for the test's length).
    await db.insertInto('nodes').values({ id: 'a-live-node', started_at: new Date(), heartbeat_at: new Date(Date.now() + 600_000) }).execute();
    for (const [room, node, leftAt] of [
      [ended, 'a-dead-node', new Date()],
      [ongoing, 'a-live-node', null],
    ] as const) {
      const id = Number((await db.selectFrom('rooms').select('id').where('token', '=', room.token).executeTakeFirstOrThrow()).id);
      pins.push(await dead.room(id));
      await db.insertInto('participants').values({ token: `${node}-${room.token}`, room_id: id, role: 'guest', display_name: 'Pat', node_id: node, joined_at: new Date(), left_at: leftAt }).execute();
    }
    await dead.close();
    const [endedPin, ongoingPin] = pins as [SfuPin, SfuPin];
    expect(await exists(janus.url, janus.apiSecret, endedPin)).toBe(true);

    // Nobody on the server node ever used either room: only its sweep (every SFU_EMPTY_ROOM_SECONDS) finds them.
    await eventually(async () => (await pinOf(ended.token)) === null, 20_000, 'the dead call\u2019s pin gone');
    expect(await exists(janus.url, janus.apiSecret, endedPin)).toBe(false);
    expect(await pinOf(ongoing.token)).toEqual(ongoingPin);
    expect(await exists(janus.url, janus.apiSecret, ongoingPin)).toBe(true);
  }, 60_000);
});

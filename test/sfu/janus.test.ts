// Janus as a real engine (docs/design.md, "Group calls through an SFU"),
// against real Janus processes started by the test, no mocks: the generated
// configuration starts, the API secret is required, rooms are created with a
// secret, pinned in the database to the least loaded instance so that two
// nodes agree, a publisher's offer is answered, and a Janus killed with -9 is
// started again and its rooms recreated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRoom } from '../helpers/api.js';
import { createTestContext, type TestContext } from '../helpers/app.js';
import { publisherOffer, startTestJanus } from '../helpers/janus.js';
import { eventually } from '../helpers/wait.js';
import type { LocalJanus } from '../../src/local-janus.js';
import { JanusError, openJanusSession } from '../../src/sfu/janus-client.js';
import { createJanusInstances, type JanusInstances } from '../../src/sfu/janus-instances.js';
import { joinAsPublisher, joinAsSubscriber, VIDEOROOM, videoRoomExists } from '../../src/sfu/video-room.js';

let ctx: TestContext;
let token: string;
let first: LocalJanus;
let second: LocalJanus;
const instances: JanusInstances[] = [];

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

beforeAll(async () => {
  ctx = await createTestContext();
  token = (await ctx.tenant()).instanceToken;
  [first, second] = await Promise.all([startTestJanus(), startTestJanus()]);
}, 60_000);

afterAll(async () => {
  await Promise.all(instances.map((made) => made.close()));
  await Promise.all([first?.stop(), second?.stop()]);
  await ctx?.close();
});

describe('a Janus started with a generated configuration', () => {
  it('answers only requests that carry its API secret', async () => {
    const refused = await openJanusSession(first.url, 'not-the-secret').then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(JanusError);
    expect((refused as JanusError).code).toBe(403);
    const session = await openJanusSession(first.url, first.apiSecret);
    expect(session.alive).toBe(true);
    await session.destroy();
  });

  it('loads the VideoRoom plugin only', async () => {
    const session = await openJanusSession(first.url, first.apiSecret);
    await expect(session.attach(VIDEOROOM)).resolves.toMatchObject({ id: expect.any(Number) });
    await expect(session.attach('janus.plugin.echotest')).rejects.toMatchObject({ code: 460 });
    await session.destroy();
  });
});

describe('rooms pinned to instances', () => {
  it('pins each room once, to the least loaded instance, and two nodes agree', async () => {
    const urls = [first.url, second.url];
    const nodeA = node(urls, first.apiSecret);
    const nodeB = node(urls, first.apiSecret);
    // Both instances share the secret here (a local Janus takes JANUS_API_SECRET when set).
    expect(first.apiSecret).toBe(second.apiSecret);
    const ids = await Promise.all([roomId(), roomId(), roomId(), roomId()]);
    for (const id of ids) {
      // Two nodes asking at once get the same instance and VideoRoom.
      const [a, b] = await Promise.all([nodeA.room(id), nodeB.room(id)]);
      expect(b).toEqual(a);
    }
    const load = await ctx.services.repos.sfuRooms.load(urls);
    expect(load.map((entry) => entry.rooms)).toEqual([2, 2]);
    // The VideoRoom exists on its instance, and nowhere else.
    const pin = (await ctx.services.repos.sfuRooms.find(ids[0]!))!;
    const other = pin.instance === first.url ? second.url : first.url;
    const [there, elsewhere] = await Promise.all([openJanusSession(pin.instance, first.apiSecret), openJanusSession(other, first.apiSecret)]);
    expect(await videoRoomExists(there, pin)).toBe(true);
    expect(await videoRoomExists(elsewhere, pin)).toBe(false);
    await Promise.all([there.destroy(), elsewhere.destroy()]);
    await nodeA.release(ids[0]!);
    expect(await ctx.services.repos.sfuRooms.find(ids[0]!)).toBeNull();
  });

  it('joins only with the room: a publisher is answered; a subscription waits for its media', async () => {
    const made = node([first.url], first.apiSecret);
    const pin = await made.room(await roomId());
    const session = await made.session(pin.instance);
    const publisher = await joinAsPublisher(session, pin, 'peer-a', () => {});
    const answer = await publisher.publish({ type: 'offer', sdp: publisherOffer() });
    expect(answer.type).toBe('answer');
    expect(answer.sdp).toMatch(/a=rtpmap:\d+ VP8\/90000/);
    expect(answer.sdp).toMatch(/a=recvonly/);
    // A feed whose media never started (no ICE without a browser) cannot be subscribed to yet.
    await expect(joinAsSubscriber(session, pin, [publisher.id], () => {})).rejects.toMatchObject({ code: 428 });
    // Someone outside Parley, knowing the room's id but not its secret, cannot destroy it.
    const handle = await session.attach(VIDEOROOM);
    await expect(handle.request({ request: 'destroy', room: pin.janusRoom, secret: 'guess' })).rejects.toMatchObject({ code: 433 });
    await publisher.leave();
  });
});

describe('a local Janus that dies', () => {
  it('is started again at the same address, and its rooms are recreated on the next use', async () => {
    const made = node([second.url], second.apiSecret);
    const id = await roomId();
    const pin = await made.room(id);
    const lost: string[] = [];
    made.onLost((instance) => lost.push(instance));
    const before = second.pid!;
    process.kill(before, 'SIGKILL');
    await eventually(() => lost.length > 0, 15_000, 'the session lost');
    expect(lost).toEqual([second.url]);
    await eventually(() => second.pid !== before, 15_000, 'a new janus');
    await second.whenUp();
    // The restarted Janus knows no room; the node makes it again under the same pin.
    const again = await made.room(id);
    expect(again).toEqual(pin);
    const session = await made.session(second.url);
    expect(await videoRoomExists(session, again)).toBe(true);
  }, 40_000);
});

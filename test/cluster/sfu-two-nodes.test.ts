// Two Parley nodes sharing one Janus (docs/design.md, "Group calls through an
// SFU"): three people, the host on node A and two guests on node B, meet in
// one VideoRoom, because the room is pinned once in the database and both
// nodes read the pin; everyone decodes everyone. After a Redis outage the
// nodes announce everyone again (`peer-present`): through the SFU nobody then
// calls anyone peer to peer. PostgreSQL, Redis and Janus are started here; the
// nodes are real server processes.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startRedis } from '../../scripts/redis.mjs';
import { join, signalingFrames } from '../helpers/browser.js';
import { chatLines, sendChat, startTwoNodes, type TwoNodes } from '../helpers/cluster.js';
import { createPostgresDatabase } from '../helpers/database.js';
import { startTestJanus } from '../helpers/janus.js';
import { everyoneSees, movedToSfu } from '../helpers/sfu.js';
import { ADMIN_TOKEN } from '../helpers/server-process.js';
import { waitFor } from '../helpers/wait.js';
import type { LocalJanus } from '../../src/local-janus.js';

let database: { url: string; drop: () => Promise<void> };
let redis: { url: string; port: number; stop(signal?: string): Promise<void> };
let janus: LocalJanus;
let cluster: TwoNodes;

beforeAll(async () => {
  [database, redis, janus] = await Promise.all([createPostgresDatabase(), startRedis(), startTestJanus()]);
  cluster = await startTwoNodes({ DATABASE_URL: database.url, REDIS_URL: redis.url, SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret });
}, 180_000);

afterAll(async () => {
  await cluster?.close();
  await janus?.stop();
  await redis?.stop();
  await database?.drop();
});

/** How many connected connections send the page's video: one through Janus, its publication. */
const sendingConnections = (page: Page) =>
  page.evaluate(async () => {
    let connections = 0;
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState !== 'connected') continue;
      let sends = false;
      (await pc.getStats()).forEach((s) => {
        if (s.type === 'outbound-rtp' && s.kind === 'video' && (s.bytesSent ?? 0) > 0) sends = true;
      });
      if (sends) connections++;
    }
    return connections;
  });

/** Three people in one room, the host on node A and two guests on node B, moved to Janus; with what each page signals. */
async function sfuCallOfThree() {
  const room = await cluster.createRoom();
  const pages = [await cluster.participant(), await cluster.participant(), await cluster.participant()];
  const seen = pages.map(signalingFrames);
  await join(pages[0]!, `${cluster.a.url}/join/${room.access_token}`, 'Dr. Ada');
  await join(pages[1]!, `${cluster.b.url}/join/${room.guest_token}`, 'Pat');
  await join(pages[2]!, `${cluster.b.url}/join/${room.guest_token}`, 'Relative');
  await everyoneSees(pages, 2, 60_000);
  // The move to Janus is make-before-break: the peer-to-peer connections go once each peer comes through it.
  await movedToSfu(pages);
  return { pages, seen };
}

describe('two nodes and one Janus', () => {
  it('put the participants of a room on both nodes in the same VideoRoom', async () => {
    const { pages } = await sfuCallOfThree();
    // Through Janus: each page sends its video on one connection, its publication.
    expect(await Promise.all(pages.map(sendingConnections))).toEqual([1, 1, 1]);
    const sfu = await (await fetch(`${cluster.a.url}/admin/sfu`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
    expect(sfu.instances).toEqual([{ url: janus.url, configured: true, answers: true, rooms: 1 }]);
    await Promise.all(pages.map((page) => page.context().close()));
  }, 120_000);

  it('calls nobody peer to peer when the nodes announce everyone again after a Redis outage', async () => {
    const { pages, seen } = await sfuCallOfThree();
    const sentBefore = seen.map((s) => s.sent.length);
    const receivedBefore = seen.map((s) => s.received.length);
    const { port } = redis;
    await redis.stop('SIGKILL');
    redis = await startRedis({ port });
    // Every page hears of the others again.
    await waitFor(() => seen.every((s, i) => s.received.slice(receivedBefore[i]).some((f) => f.type === 'peer-present')), 60_000, 'peer-present on every page');
    // A barrier: each page's chat line, sent after it heard peer-present, reaches everyone; an offer the page made
    // on hearing it went out on the same socket before that line.
    for (const [i, page] of pages.entries()) await sendChat(page, `after the outage ${i}`);
    for (const page of pages) {
      await waitFor(async () => (await chatLines(page)).filter((line) => line.includes('after the outage')).length === 3, 30_000, 'every chat line on every page');
    }
    const offers = seen.map((s, i) => s.sent.slice(sentBefore[i]).filter((f) => f.type === 'signal' && f.data?.description?.type === 'offer').length);
    expect(offers).toEqual([0, 0, 0]);
    await everyoneSees(pages, 2, 30_000);
    expect(await Promise.all(pages.map(sendingConnections))).toEqual([1, 1, 1]);
  }, 180_000);
});

// Two Parley nodes sharing one Janus (docs/design.md, "Group calls through an
// SFU"): three people, the host on node A and two guests on node B, meet in
// one VideoRoom, because the room is pinned once in the database and both
// nodes read the pin; everyone decodes everyone. PostgreSQL, Redis and Janus
// are started here; the nodes are real server processes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startRedis } from '../../scripts/redis.mjs';
import { join } from '../helpers/browser.js';
import { startTwoNodes, type TwoNodes } from '../helpers/cluster.js';
import { createPostgresDatabase } from '../helpers/database.js';
import { startTestJanus } from '../helpers/janus.js';
import { everyoneSees, movedToSfu } from '../helpers/sfu.js';
import { ADMIN_TOKEN } from '../helpers/server-process.js';
import type { LocalJanus } from '../../src/local-janus.js';

let database: { url: string; drop: () => Promise<void> };
let redis: { url: string; stop(): Promise<void> };
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

describe('two nodes and one Janus', () => {
  it('put the participants of a room on both nodes in the same VideoRoom', async () => {
    const room = await cluster.createRoom();
    const pages = [await cluster.participant(), await cluster.participant(), await cluster.participant()];
    await join(pages[0]!, `${cluster.a.url}/join/${room.access_token}`, 'Dr. Ada');
    await join(pages[1]!, `${cluster.b.url}/join/${room.guest_token}`, 'Pat');
    await join(pages[2]!, `${cluster.b.url}/join/${room.guest_token}`, 'Relative');
    await everyoneSees(pages, 2, 60_000);
    // The move to Janus is make-before-break: the peer-to-peer connections go once each peer comes through it.
    await movedToSfu(pages);
    // Through Janus: each page sends its video on one connection, its publication.
    const sending = await Promise.all(
      pages.map((page) =>
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
        }),
      ),
    );
    expect(sending).toEqual([1, 1, 1]);
    const sfu = await (await fetch(`${cluster.a.url}/admin/sfu`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json();
    expect(sfu.instances).toEqual([{ url: janus.url, configured: true, answers: true, rooms: 1 }]);
  }, 120_000);
});

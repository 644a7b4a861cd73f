// Three people in a call across two nodes reload their pages at the same
// moment and press Join again together (issue 45): two on node A, one on node
// B, so that the new pages' offers cross both within a node and through Redis.
// Then again just after Redis was killed and started again, while the nodes
// announce everyone to their rooms anew (peer-present, which makes the
// impolite side of a connection that never completed call again). Everyone
// must see and hear everyone within RECOVERED_WITHIN_MS, by themselves.
// One node: test/browser/reload-together.test.ts.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startRedis } from '../../scripts/redis.mjs';
import { join, pressJoin } from '../helpers/browser.js';
import { startTwoNodes, type TwoNodes } from '../helpers/cluster.js';
import { createPostgresDatabase } from '../helpers/database.js';
import { flowingFrom, reloadTogether } from '../helpers/reload-together.js';
import { waitFor } from '../helpers/wait.js';

/** A working build is back in a few seconds on a loaded machine; the race left pages without video for good. */
const RECOVERED_WITHIN_MS = 25_000;
const ROUNDS = 3;

let database: { url: string; drop(): Promise<void> };
let redis: { url: string; port: number; pid: number; stop(signal?: string): Promise<void> };
let cluster: TwoNodes | undefined;

beforeAll(async () => {
  database = await createPostgresDatabase();
  redis = await startRedis();
  // SFU=off (also under PARLEY_TEST_SFU=janus): this is about the mesh's crossing offers, one connection per peer.
  cluster = await startTwoNodes({ DATABASE_URL: database.url, REDIS_URL: redis.url, RECONNECT_GRACE_SECONDS: '20', SFU: 'off' });
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await redis?.stop();
  await database?.drop();
});

const readiness = async (url: string) => (await (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) })).json()).status;

describe('three people on two nodes reloading together', () => {
  it(`see and hear each other again within ${RECOVERED_WITHIN_MS / 1000} s, also right after a Redis outage`, { timeout: 400_000 }, async () => {
    const { a, b } = cluster!;
    const room = await cluster!.createRoom();
    const pages: Page[] = [await cluster!.participant(), await cluster!.participant(), await cluster!.participant()];
    await join(pages[0]!, `${a.url}/join/${room.access_token}`, 'Host on A');
    await join(pages[1]!, `${a.url}/join/${room.guest_token}`, 'Guest on A');
    await join(pages[2]!, `${b.url}/join/${room.guest_token}`, 'Guest on B');
    await Promise.all(pages.map((page) => flowingFrom(page, 2, 45_000)));

    const took: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) took.push(await reloadTogether(pages, pressJoin, RECOVERED_WITHIN_MS));

    // Redis away for a few seconds, then back; the pages reload as the nodes announce everyone again.
    await redis.stop('SIGKILL');
    await waitFor(async () => (await readiness(a.url)) === 'degraded' && (await readiness(b.url)) === 'degraded', 30_000, 'both nodes degraded');
    redis = await startRedis({ port: redis.port });
    await waitFor(async () => (await readiness(a.url)) === 'ok' && (await readiness(b.url)) === 'ok', 30_000, 'both nodes ready again');
    const afterOutage = await reloadTogether(pages, pressJoin, RECOVERED_WITHIN_MS);

    console.log(`[reload-together] two nodes, ${ROUNDS} rounds: everyone flowing from everyone after ${took.map((ms) => `${ms} ms`).join(', ')}; right after a Redis outage: ${afterOutage} ms`);
    expect(took).toHaveLength(ROUNDS);
  });
});

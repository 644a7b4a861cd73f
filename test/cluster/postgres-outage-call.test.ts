// PostgreSQL restarted mid-call (issue 16, docs/deploy.md "What happens
// when…"): two nodes on a PostgreSQL cluster of this test's own and one
// Redis, real Chromium participants, a host on node A and a guest on node B.
// - The running call goes on: media, and chat (which needs no database).
// - Someone who clicks Join while the database is away is told the service is
//   briefly unavailable, and the page joins by itself once it is back; someone
//   who opens their link meanwhile gets a page that says so and loads the join
//   screen by itself once it can.
// - Presence settles: nobody still in the call is marked gone because every
//   node's heartbeat went stale during the outage; leaves and the room's end
//   are recorded as usual afterwards.
// - /healthz answers 200 and /readyz 503 (the database is needed for
//   everything) within 1 s throughout.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startRedis } from '../../scripts/redis.mjs';
import { inboundStats } from '../helpers/browser.js';
import { chatLines, chatOutcome, expectFlowingFrom, sendChat, startTwoNodes, watchHealth, type TwoNodes } from '../helpers/cluster.js';
import { startOwnPostgres, type OwnPostgres } from '../helpers/database.js';
import { sleep, waitFor } from '../helpers/wait.js';

/** Longer than NODE_DEAD_AFTER_SECONDS (4 here) and a heartbeat: every node's heartbeat is stale when it comes back. */
const OUTAGE_MS = 6_500;

let postgres: OwnPostgres | undefined;
let redis: { url: string; stop(): Promise<void> } | undefined;
let cluster: TwoNodes | undefined;

beforeAll(async () => {
  postgres = await startOwnPostgres();
  redis = await startRedis();
  cluster = await startTwoNodes({ DATABASE_URL: postgres.url, REDIS_URL: redis!.url });
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await redis?.stop();
  await postgres?.stop();
});

const joinedToken = (page: Page, joinToken: string) => page.evaluate((key) => sessionStorage.getItem(key), `parley:participant:${joinToken}`);

describe('a call across two nodes through a PostgreSQL restart', () => {
  it('goes on, lets a join during the outage in by itself afterwards, and settles presence and the room', { timeout: 180_000 }, async () => {
    const { a, b, api } = cluster!;
    const { room, host, guest } = await cluster!.call();
    // Someone else opens the link and waits on the join screen.
    const late = await cluster!.participant();
    await late.goto(`${b.url}/join/${room.guest_token}`);
    await late.getByTestId('name-input').fill('Nia');

    const health = watchHealth([a.url, b.url]);
    await postgres!.halt('fast');
    const stoppedAt = Date.now();

    // The running call goes on: media peer to peer, chat across the nodes through Redis.
    const before = await inboundStats(host);
    await expect.poll(async () => (await inboundStats(host)).framesDecoded - before.framesDecoded, { timeout: 5_000 }).toBeGreaterThan(10);
    await sendChat(guest, 'still here without the database');
    expect(await chatOutcome(guest, 'still here without the database')).toBe('sent');
    await expect.poll(() => chatLines(host), { timeout: 5_000 }).toContain('Pat: still here without the database');

    // A join while the database is away: told so, not let in, not sent away.
    await late.getByTestId('join-button').click();
    await expect.poll(() => late.getByRole('status').textContent(), { timeout: 10_000 }).toContain('briefly unavailable');
    expect(await joinedToken(late, room.guest_token)).toBeNull();

    // Someone who opens their link meanwhile gets a page saying so (503, Retry-After), which loads again by itself.
    const opener = await cluster!.participant();
    const answer = await opener.goto(`${a.url}/join/${room.guest_token}`);
    expect(answer?.status()).toBe(503);
    expect(answer?.headers()['retry-after']).toBeDefined();
    await opener.getByTestId('unavailable').waitFor();

    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - stoppedAt)));
    await postgres!.resume();
    const backAt = Date.now();

    // The late joiner is in by itself, and everyone sees and hears everyone.
    await waitFor(() => joinedToken(late, room.guest_token), 15_000, 'the late joiner in the call');
    const joinedMs = Date.now() - backAt;
    await Promise.all([expectFlowingFrom(late, 2, 15_000), expectFlowingFrom(host, 2, 15_000), expectFlowingFrom(guest, 2, 15_000)]);
    const mediaMs = Date.now() - backAt;
    expect(await late.getByRole('status').textContent()).not.toContain('briefly unavailable');
    await opener.getByTestId('name-input').waitFor({ timeout: 10_000 });
    await opener.context().close();

    // Presence: all three, and still all three once every node had time to judge the others dead or alive.
    const current = async () => (await api('GET', `/api/rooms/${room.token}`)).json;
    await expect.poll(async () => (await current()).current_participants.length, { timeout: 10_000 }).toBe(3);
    const watchUntil = Date.now() + 6_000;
    while (Date.now() < watchUntil) {
      const now = await current();
      expect(now.current_participants).toHaveLength(3);
      expect(now.status).toBe('started');
      await sleep(500);
    }

    // Health: /healthz 200 and /readyz answered within a second throughout; /readyz 503 naming the database while it was away.
    await waitFor(async () => (await fetch(`${a.url}/readyz`)).status === 200 && (await fetch(`${b.url}/readyz`)).status === 200, 10_000, 'both nodes ready again');
    const samples = await health.stop();
    expect(samples.filter((s) => s.ms >= 1000 || s.status === null)).toEqual([]);
    expect(samples.filter((s) => s.url.endsWith('/healthz') && s.status !== 200).map((s) => `${s.url} ${s.status} after ${Math.round(s.ms)} ms: ${s.body}`)).toEqual([]);
    const unready = samples.filter((s) => s.url.endsWith('/readyz') && s.status === 503);
    expect(unready.length).toBeGreaterThan(0);
    for (const s of unready) expect(JSON.parse(s.body)).toMatchObject({ status: 'unavailable', checks: { database: 'unavailable' } });

    // The lifecycle after the outage: leaves are recorded, and the room ends once everyone has gone.
    await guest.getByTestId('leave-button').click();
    await expect.poll(async () => (await current()).current_participants.length, { timeout: 10_000 }).toBe(2);
    await late.getByTestId('leave-button').click();
    await host.getByTestId('leave-button').click();
    await expect.poll(async () => (await current()).status, { timeout: 15_000, interval: 250 }).toBe('ended');
    for (const node of [a, b]) expect(node.child.exitCode).toBeNull();

    console.log(
      'postgres-outage-call',
      JSON.stringify({ outageMs: backAt - stoppedAt, lateJoinerInMsAfterRestart: joinedMs, mediaAllThreeMsAfterRestart: mediaMs, slowestHealthMs: Math.round(Math.max(...samples.map((s) => s.ms))) }),
    );
  });
});

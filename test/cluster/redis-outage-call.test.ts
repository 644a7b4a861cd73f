// Redis killed mid-call and started again on the same port (issue 16,
// docs/deploy.md "What happens when…"): two nodes on one PostgreSQL, real
// Chromium participants, a host on node A and a guest on node B.
// - The running call's media goes on; a chat sent during the outage either
//   arrives or is shown as not sent, never acknowledged and then lost; every
//   acknowledged one arrives exactly once; a retry after it arrives once.
// - People who join a room during the outage (host on A, guest on B) see and
//   hear each other soon after Redis comes back, without reloading, and
//   so does a newcomer who joins after; both nodes are subscribed to the room again.
// - /healthz and /readyz answer 200 throughout ("degraded" while Redis is
//   away: one shared Redis must not take every node out of rotation), and
//   promptly: readiness does not wait on the missing Redis.
// - Each node logs one line when it loses Redis and one when it is back.
// - Redis frozen (SIGSTOP) instead: a chat shows as not sent after 2 s, Redis
//   delivers it when it thaws, and its retry does not show twice.
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startRedis } from '../../scripts/redis.mjs';
import { peerIdOf } from '../../src/domain/participation/participation.service.js';
import { inboundStatsByConnection, join } from '../helpers/browser.js';
import { chatLines, chatOutcome, expectFlowingFrom, sendChat, startTwoNodes, watchHealth, type TwoNodes } from '../helpers/cluster.js';
import { createPostgresDatabase } from '../helpers/database.js';
import { parseLine, type ServerProcess } from '../helpers/server-process.js';
import { sleep, waitFor } from '../helpers/wait.js';

/** How long Redis stays away: long enough for joins, chats and checks in the middle of it. */
const OUTAGE_MS = 8_000;

let database: { url: string; drop(): Promise<void> };
let redis: { url: string; port: number; pid: number; stop(signal?: string): Promise<void> };
let cluster: TwoNodes | undefined;

beforeAll(async () => {
  database = await createPostgresDatabase();
  redis = await startRedis();
  cluster = await startTwoNodes({ DATABASE_URL: database.url, REDIS_URL: redis.url });
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await redis?.stop();
  await database?.drop();
});

const messages = (node: ServerProcess) => node.output.map(parseLine).map((line) => String(line?.msg ?? ''));
const readiness = async (node: ServerProcess) => (await (await fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(5000) })).json()).status;

/** Decoded frames of each of the page's connections, now. */
const frames = async (page: Page) => (await inboundStatsByConnection(page)).map((s) => s.framesDecoded);

async function expectLine(page: Page, text: string, times: number) {
  await expect.poll(async () => (await chatLines(page)).filter((line) => line.includes(text)).length, { timeout: 30_000 }).toBe(times);
}

describe('a call across two nodes through a Redis outage', () => {
  it('keeps media, never acknowledges a lost chat, and heals rooms joined during the outage without reloads', { timeout: 300_000 }, async () => {
    const { a, b } = cluster!;
    const { host, guest } = await cluster!.call();
    await sendChat(host, 'before the outage');
    await expectLine(guest, 'Dr. Ada: before the outage', 1);
    for (const page of [host, guest]) await page.evaluate(() => ((window as unknown as { __notReloaded: boolean }).__notReloaded = true));

    const health = watchHealth([a.url, b.url]);
    await redis.stop('SIGKILL');
    const killedAt = Date.now();
    await waitFor(async () => (await readiness(a)) === 'degraded' && (await readiness(b)) === 'degraded', 30_000, 'both nodes degraded');

    // Chat during the outage, both ways: each line ends sent or not sent, never stays "sending".
    const during = [
      { from: host, to: guest, text: 'during the outage from A', name: 'Dr. Ada' },
      { from: guest, to: host, text: 'during the outage from B', name: 'Pat' },
    ];
    const outcomes: Record<string, 'sent' | 'failed'> = {};
    for (const chat of during) {
      await sendChat(chat.from, chat.text);
      outcomes[chat.text] = await chatOutcome(chat.from, chat.text);
    }

    // The running call's media goes on, peer to peer.
    const [hostFrames, guestFrames] = [await frames(host), await frames(guest)];
    await expect.poll(async () => (await frames(host))[0]! - hostFrames[0]!, { timeout: 20_000 }).toBeGreaterThan(10);
    await expect.poll(async () => (await frames(guest))[0]! - guestFrames[0]!, { timeout: 20_000 }).toBeGreaterThan(10);

    // A new room, its host on A and its guest on B, both joining while Redis is away; the API works meanwhile.
    // The guest joins last, so it calls the host, and that offer is lost. The case the page's earlier
    // handling never healed is a guest on the impolite side of perfect negotiation (the smaller peer id).
    // Peer ids are random: a pair the other way round leaves, and another room is tried (a few times).
    let second: Record<string, any>;
    let host2: Page;
    let guest2: Page;
    let guestImpolite = false;
    for (let attempt = 1; ; attempt++) {
      second = await cluster!.createRoom();
      host2 = await cluster!.participant();
      guest2 = await cluster!.participant();
      await join(host2, `${a.url}/join/${second.access_token}`, 'Dr. Bea');
      const hostId = peerIdOf(await participantToken(host2, second.access_token));
      await join(guest2, `${b.url}/join/${second.guest_token}`, 'Sam');
      guestImpolite = peerIdOf(await participantToken(guest2, second.guest_token)) < hostId;
      if (guestImpolite || attempt === 6) break;
      for (const page of [guest2, host2]) {
        await page.getByTestId('leave-button').click();
        await page.context().close();
      }
    }
    for (const page of [host2, guest2]) await page.evaluate(() => ((window as unknown as { __notReloaded: boolean }).__notReloaded = true));

    // The outage's length is the scenario, not a wait for something.
    await sleep(Math.max(0, OUTAGE_MS - (Date.now() - killedAt)));
    redis = await startRedis({ port: redis.port });
    const backAt = Date.now();
    const outageMs = backAt - killedAt;

    // Soon after Redis is back, the room joined during the outage has media both ways. The bound is the
    // behaviour: the page's earlier handling never healed (nothing 30 s after recovery, the issue). A
    // working build heals in a few seconds (printed as mediaInRoomJoinedDuringOutageMsAfterRecovery);
    // 25 s is far above that on a loaded machine.
    await Promise.all([expectFlowingFrom(host2, 1, 25_000), expectFlowingFrom(guest2, 1, 25_000)]);
    const healedMs = Date.now() - backAt;
    // Both nodes are subscribed to that room again (the issue found neither 30 s after recovery).
    const roomId = await roomIdOf(second.token);
    const probe = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    try {
      await probe.connect();
      expect(await probe.pubsub('NUMSUB', `parley:room:${roomId}`)).toEqual([`parley:room:${roomId}`, 2]);
    } finally {
      probe.disconnect();
    }
    await sendChat(host2, 'hello Sam');
    expect(await chatOutcome(host2, 'hello Sam')).toBe('sent');
    await expectLine(guest2, 'Dr. Bea: hello Sam', 1);
    await sendChat(guest2, 'hello Dr. Bea');
    expect(await chatOutcome(guest2, 'hello Dr. Bea')).toBe('sent');
    await expectLine(host2, 'Sam: hello Dr. Bea', 1);

    // The first call: what was acknowledged arrived exactly once; what was not was never delivered, and a retry arrives once.
    for (const chat of during) {
      if (outcomes[chat.text] === 'sent') {
        await expectLine(chat.to, `${chat.name}: ${chat.text}`, 1);
        continue;
      }
      expect(await chatLines(chat.to)).not.toContainEqual(expect.stringContaining(chat.text));
      await chat.from.getByTestId('chat-message').filter({ hasText: chat.text }).getByTestId('chat-retry').click();
      expect(await chatOutcome(chat.from, chat.text)).toBe('sent');
      await expectLine(chat.to, `${chat.name}: ${chat.text}`, 1);
    }
    await sendChat(guest, 'after the outage');
    expect(await chatOutcome(guest, 'after the outage')).toBe('sent');
    await expectLine(host, 'Pat: after the outage', 1);
    await sleep(1000); // proves that nothing arrives twice, late
    for (const chat of during) await expectLine(chat.to, chat.text, 1);
    await Promise.all([host.context().close(), guest.context().close()]);

    // A newcomer after the outage, on node A: everyone sees and hears everyone.
    const newcomer = await cluster!.participant();
    const joiningAt = Date.now();
    await join(newcomer, `${a.url}/join/${second.guest_token}`, 'Nia');
    await Promise.all([expectFlowingFrom(newcomer, 2, 45_000), expectFlowingFrom(host2, 2, 45_000), expectFlowingFrom(guest2, 2, 45_000)]);
    const newcomerMs = Date.now() - joiningAt;
    await sendChat(newcomer, 'hello both');
    await expectLine(host2, 'Nia: hello both', 1);
    await expectLine(guest2, 'Nia: hello both', 1);
    for (const page of [host2, guest2]) expect(await page.evaluate(() => (window as unknown as { __notReloaded?: boolean }).__notReloaded)).toBe(true);

    // Health: every answer 200, "degraded" while Redis was away, "ok" again after; prompt throughout. The
    // bounds are the behaviour, set against what a broken build takes, not against this machine's speed:
    // a readiness check that waited on Redis would take its whole bound (700 ms, health.routes.ts) on
    // every call while Redis is away, or Redis's own PING limit (1 s) without it, which the median shows.
    // A working build answers in milliseconds; a loaded 2-core machine stalls every process now and then
    // (1-2.7 s seen), which moves single answers, never the median: the median of the degraded answers is
    // held under 500 ms, and every answer under the watch's 5 s cut (a hang has no status).
    await waitFor(async () => (await readiness(a)) === 'ok' && (await readiness(b)) === 'ok', 30_000, 'both nodes ready again');
    const samples = await health.stop();
    const slowest = Math.max(...samples.map((s) => s.ms));
    expect(samples.filter((s) => s.status !== 200).map((s) => `${s.url} ${s.status} after ${Math.round(s.ms)} ms: ${s.body}`)).toEqual([]);
    const degraded = samples.filter((s) => s.url.endsWith('/readyz') && JSON.parse(s.body).status === 'degraded').map((s) => s.ms);
    expect(degraded.length).toBeGreaterThan(0);
    const degradedMedian = degraded.sort((x, y) => x - y)[Math.floor(degraded.length / 2)]!;
    console.log(`[bench] redis-outage-call health: ${samples.length} answers, median degraded /readyz ${Math.round(degradedMedian)} ms, slowest ${Math.round(slowest)} ms`);
    expect(degradedMedian).toBeLessThan(500);

    // Operators: one line on losing Redis and one on regaining it, per node; the counters moved.
    for (const node of [a, b]) {
      expect(messages(node).filter((m) => m.includes(`at 127.0.0.1:${redis.port} lost`))).toHaveLength(1);
      expect(messages(node).filter((m) => m.includes(`at 127.0.0.1:${redis.port} is back after`))).toHaveLength(1);
      expect(node.output.join('\n')).not.toMatch(/\n\s+at /);
    }
    const metricsB = await (await fetch(`${b.url}/metrics`)).text();
    expect(metricsB).toMatch(/^parley_redis_up 1$/m);
    expect(Number(/^parley_redis_resubscriptions_total (\d+)/m.exec(metricsB)?.[1])).toBeGreaterThanOrEqual(2);
    const failures = await Promise.all([a, b].map(async (node) => Number(/^parley_bus_publish_failures_total (\d+)/m.exec(await (await fetch(`${node.url}/metrics`)).text())?.[1])));
    expect(failures[0]! + failures[1]!).toBeGreaterThan(0);

    // Redis frozen (SIGSTOP) rather than gone: no connection closes, a chat gets no answer within 2 s and
    // shows as not sent, and Redis still delivers it when it thaws. The retry carries the same messageId: once.
    process.kill(redis.pid, 'SIGSTOP');
    try {
      await sendChat(host2, 'while Redis is frozen');
      expect(await chatOutcome(host2, 'while Redis is frozen')).toBe('failed');
    } finally {
      process.kill(redis.pid, 'SIGCONT');
    }
    await expectLine(guest2, 'Dr. Bea: while Redis is frozen', 1);
    await host2.getByTestId('chat-message').filter({ hasText: 'while Redis is frozen' }).getByTestId('chat-retry').click();
    expect(await chatOutcome(host2, 'while Redis is frozen')).toBe('sent');
    await sleep(1000); // proves that the retry, arriving too, shows nowhere twice
    for (const page of [guest2, newcomer]) await expectLine(page, 'Dr. Bea: while Redis is frozen', 1);

    console.log(
      '[bench] redis-outage-call',
      JSON.stringify({ outageMs, guestImpolite, chatsDuringOutage: outcomes, mediaInRoomJoinedDuringOutageMsAfterRecovery: healedMs, newcomerMediaMs: newcomerMs, healthSamples: samples.length, slowestHealthMs: Math.round(slowest) }),
    );
  });
});

/** The participant token the page joined with, once it has joined (kept for resuming, in-call/reconnection.ts). */
async function participantToken(page: Page, joinToken: string): Promise<string> {
  const token = await page.waitForFunction((key) => sessionStorage.getItem(key), `parley:participant:${joinToken}`, { timeout: 30_000 });
  return (await token.jsonValue())!;
}

async function roomIdOf(token: string): Promise<number> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return Number((await client.query('select id from rooms where token = $1', [token])).rows[0].id);
  } finally {
    await client.end();
  }
}

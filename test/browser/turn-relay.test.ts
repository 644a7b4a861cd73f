// A call forced through a real TURN server (Debian's coturn, started here):
// ICE_TRANSPORT_POLICY=relay, short-lived credentials from TURN_SECRET (the
// coturn REST scheme). Host and guest still decode each other's video, and
// the selected candidate pair is a relayed one on both sides. The newcomer's
// first connection gathers its relay candidates while the join screen shows,
// with the page's own credentials (docs/call.md, "Join to first remote frame").
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startCoturn } from '../../scripts/coturn.mjs';
import {
  callConnectionStates,
  expectMediaFlowing,
  expiryOf,
  inboundStats,
  join,
  pressJoin,
  selectedPairs,
  signalingFrames,
  startWorld,
  turnUsernames,
  type BrowserWorld,
} from '../helpers/browser.js';
import { waitFor } from '../helpers/wait.js';

const SECRET = 'turn-test-secret-0123456789';
let turn: { url: string; port: number; stop(): Promise<void> };
let world: BrowserWorld;

beforeAll(async () => {
  turn = await startCoturn({ secret: SECRET });
  world = await startWorld({ TURN_SECRET: SECRET, TURN_URLS: turn.url, ICE_TRANSPORT_POLICY: 'relay' });
});
// Each test's pages are closed after it: calls left running would slow the next.
afterEach(() => world.closeContexts());
afterAll(async () => {
  await world?.close();
  await turn?.stop();
});

describe('a relay-only call through coturn', () => {
  it('connects host and guest through TURN with per-participant credentials', async () => {
    const room = await world.createRoom();
    const host = await world.participant();
    const guest = await world.participant();
    // The join reply carries a TURN server with a time-limited username, never a static password.
    const joined = new Promise<any>((resolve) =>
      host.on('websocket', (ws) =>
        ws.on('framereceived', (frame) => {
          const message = JSON.parse(String(frame.payload));
          if (message.type === 'joined') resolve(message);
        }),
      ),
    );
    await join(host, room.host_join_url, 'Dr. Relay');
    await join(guest, room.guest_join_url, 'Patient');
    const reply = await joined;
    expect(reply.iceTransportPolicy).toBe('relay');
    const turnEntry = reply.iceServers.find((s: any) => [s.urls].flat().some((u: string) => u.startsWith('turn:')));
    const [expiry, peer] = String(turnEntry.username).split(':');
    expect(Number(expiry)).toBeGreaterThan(Date.now() / 1000);
    expect(peer).toBe(reply.self.id);
    expect(turnEntry.credential).not.toBe(SECRET);

    await Promise.all([expectMediaFlowing(host, 20_000), expectMediaFlowing(guest, 20_000)]);
    for (const page of [host, guest]) {
      const pairs = await selectedPairs(page);
      expect(pairs.length).toBeGreaterThan(0);
      for (const pair of pairs) expect(pair.local).toBe('relay');
    }
  });
});

/**
 * The first frame of this type the page received. Playwright reports a frame
 * after the page has handled it: the call's screen can be up before its
 * `joined` frame reaches the test (CI, under load).
 */
const firstReceived = (seen: { received: any[] }, type: string) =>
  waitFor(() => seen.received.find((f) => f.type === type), 10_000, `a ${type} frame`);

/** The TURN user of each of the page's call connections. */
const turnUsers = async (page: Page) => (await turnUsernames(page)).map((username) => username.split(':')[1] ?? '');
/** The TURN username among ICE servers a message carried. */
const turnUsernameIn = (iceServers: { urls: string | string[]; username?: string }[]) =>
  iceServers.find((s) => [s.urls].flat().some((u) => u.startsWith('turn:')))!.username!;
const until = (time: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, time - Date.now())));

const candidateLines = (sdp: string) => sdp.split(/\r?\n/).filter((line) => line.startsWith('a=candidate:'));

/** The SDPs of the page's call connections (audio and video: the network check's has a data channel only) that gathered with their offer applied. */
function gatheredOffers(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs.flatMap((pc) => {
      const sdp = pc.signalingState === 'have-local-offer' ? (pc.localDescription?.sdp ?? '') : '';
      return sdp.includes('m=video') && sdp.includes('a=candidate:') ? [sdp] : [];
    }),
  );
}

describe('the first connection, made while the join screen shows', () => {
  it('gathers through TURN with the page\u2019s own credentials: the offer in the join carries relay candidates, and the call connects on them', async () => {
    const room = await world.createRoom();
    const host = await world.participant();
    const guest = await world.participant();
    await join(host, room.host_join_url, 'Dr. Relay');
    const seen = signalingFrames(guest);
    await guest.goto(room.guest_join_url);
    // While the person looks at the preview, the connection gets its relay candidate.
    await expect.poll(async () => (await gatheredOffers(guest)).length, { timeout: 20_000 }).toBe(1);
    await pressJoin(guest, 'Patient');
    const joinFrame = seen.sent.find((f) => f.type === 'join');
    // Gathered before the click: relay candidates in the SDP the join carried (relay only: nothing else).
    const lines = candidateLines(joinFrame.offer);
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toContain(' typ relay ');
    await Promise.all([expectMediaFlowing(host, 20_000), expectMediaFlowing(guest, 20_000)]);
    expect((await turnUsers(guest))[0]).toMatch(/^page-[0-9a-f]{16}$/);
    const pairs = await selectedPairs(guest);
    expect(pairs.length).toBeGreaterThan(0);
    for (const pair of pairs) expect(pair.local).toBe('relay');
  });

  it('is made again when the network comes back, so that the join carries candidates of the network the page is on', async () => {
    const room = await world.createRoom();
    const guest = await world.participant();
    const seen = signalingFrames(guest);
    await guest.goto(room.guest_join_url);
    await guest.getByTestId('local-video').waitFor();
    await expect.poll(async () => (await gatheredOffers(guest)).length, { timeout: 20_000 }).toBe(1);
    const [before] = await gatheredOffers(guest);
    await guest.context().setOffline(true);
    await guest.context().setOffline(false);
    // The connection gathered before is closed, and a new one gathers.
    await expect.poll(async () => (await gatheredOffers(guest)).filter((sdp) => sdp !== before).length, { timeout: 20_000 }).toBe(1);
    const [after, ...others] = await gatheredOffers(guest);
    expect(others).toEqual([]);
    await pressJoin(guest, 'Patient');
    const fingerprint = (sdp: string) => /^a=fingerprint:(.+)$/m.exec(sdp)?.[1];
    expect(fingerprint(seen.sent.find((f) => f.type === 'join').offer)).toBe(fingerprint(after!));
  });

});

/**
 * A world of its own for the tests of one describe block, relay only through
 * the coturn above with `env` added: started before them, its pages closed
 * after each, stopped after the last. `env` is read then (coturn's URL is known).
 */
function worldOfItsOwn(env: () => Record<string, string>): () => BrowserWorld {
  let own: BrowserWorld;
  beforeAll(async () => {
    own = await startWorld({ TURN_SECRET: SECRET, TURN_URLS: turn.url, ICE_TRANSPORT_POLICY: 'relay', ...env() });
  });
  afterEach(() => own.closeContexts());
  afterAll(() => own?.close());
  return () => own;
}

describe('credentials that live ten seconds (TURN_TTL_SECONDS=10), renewed during the call', () => {
  const shortLived = worldOfItsOwn(() => ({ TURN_TTL_SECONDS: '10' }));

  it('make the first connection gather at the Join once the page\u2019s are older than a tenth of their life', async () => {
    const room = await shortLived().createRoom();
    const host = await shortLived().participant();
    const guest = await shortLived().participant();
    await join(host, room.host_join_url, 'Dr. Relay');
    const seen = signalingFrames(guest);
    await guest.goto(room.guest_join_url);
    // One second of gathering ahead.
    await guest.waitForFunction(() => performance.now() > 1500, null, { timeout: 15_000, polling: 250 });
    await pressJoin(guest, 'Patient');
    const joinFrame = seen.sent.find((f) => f.type === 'join');
    // A connection made again at the window's end: its offer made ahead, nothing gathered.
    expect(joinFrame.offer).toContain('a=fingerprint:');
    expect(candidateLines(joinFrame.offer)).toEqual([]);
    await Promise.all([expectMediaFlowing(host, 20_000), expectMediaFlowing(guest, 20_000)]);
    // Configured with the call's credentials, the participant's own.
    const joined = await firstReceived(seen, 'joined');
    expect(await turnUsers(guest)).toEqual([joined.self.id]);
    const pairs = await selectedPairs(guest);
    expect(pairs.length).toBeGreaterThan(0);
    for (const pair of pairs) expect(pair.local).toBe('relay');
  });

  it('let a host alone for longer than their life answer through the relay, and the call come back through it after an outage', { timeout: 150_000 }, async () => {
    const room = await shortLived().createRoom();
    const host = await shortLived().participant();
    const guest = await shortLived().participant();
    const hostFrames = signalingFrames(host);
    await join(host, room.host_join_url, 'Dr. Relay');
    const joined = await firstReceived(hostFrames, 'joined');
    // Alone until the credentials of the join have expired: fresh ones came meanwhile.
    await until(expiryOf(turnUsernameIn(joined.iceServers)) + 1000);
    const renewed = () => hostFrames.received.filter((f) => f.type === 'ice-servers').map((f) => turnUsernameIn(f.iceServers));
    expect(renewed().length).toBeGreaterThanOrEqual(2);
    for (const username of renewed()) expect(username.split(':')[1]).toBe(joined.self.id);

    await join(guest, room.guest_join_url, 'Patient');
    await Promise.all([expectMediaFlowing(host, 20_000), expectMediaFlowing(guest, 20_000)]);
    // The host answered with renewed credentials (relay only: the expired ones would have given it no candidate).
    const [answeredWith] = await turnUsernames(host);
    expect(renewed()).toContain(answeredWith);
    for (const page of [host, guest]) for (const pair of await selectedPairs(page)) expect(pair.local).toBe('relay');

    // Every credential the two connections were made with expires; the relays they allocated stay.
    const madeWith = [answeredWith!, ...(await turnUsernames(guest))];
    await until(Math.max(...madeWith.map(expiryOf)) + 1000);
    expect(await callConnectionStates(host)).toEqual(['connected']);
    // The TURN server goes away and comes back: both sides restart ICE, and new relays need valid credentials.
    const { port } = turn;
    await turn.stop();
    await expect.poll(() => callConnectionStates(host), { timeout: 30_000 }).not.toEqual(['connected']);
    turn = await startCoturn({ secret: SECRET, port });
    // Ceilings only a broken build reaches. Under `npm run test:under-load` the guest once stayed `disconnected` for good:
    // it had dropped the host's ICE restart that came right behind the answer to its own (peer-connection.ts, settingRemoteAnswer).
    await expect.poll(() => callConnectionStates(host), { timeout: 60_000 }).toEqual(['connected']);
    await expect.poll(() => callConnectionStates(guest), { timeout: 60_000 }).toEqual(['connected']);
    const before = await inboundStats(guest);
    await expect.poll(async () => (await inboundStats(guest)).framesDecoded, { timeout: 30_000 }).toBeGreaterThan(before.framesDecoded);
    for (const page of [host, guest]) for (const pair of await selectedPairs(page)) expect(pair.local).toBe('relay');
    // Restarted with credentials that were valid then, the guest's own too (it had made its connection with the join page's).
    for (const username of [...(await turnUsernames(host)), ...(await turnUsernames(guest))]) {
      expect(madeWith).not.toContain(username);
    }
  });
});

describe('TURN reached over TCP only (what a network that drops UDP leaves, as some hospitals\u2019 do)', () => {
  const overTcp = worldOfItsOwn(() => ({ TURN_URLS: turn.url.replace('transport=udp', 'transport=tcp') }));

  it('connects host and guest through relays reached over TCP', async () => {
    const room = await overTcp().createRoom();
    const host = await overTcp().participant();
    const guest = await overTcp().participant();
    await join(host, room.host_join_url, 'Dr. Relay');
    await join(guest, room.guest_join_url, 'Patient');
    await Promise.all([expectMediaFlowing(host, 20_000), expectMediaFlowing(guest, 20_000)]);
    for (const page of [host, guest]) {
      // The selected pair's local candidate: a relay, allocated over TCP to the TURN server.
      const pairs = await selectedPairs(page);
      expect(pairs.length).toBeGreaterThan(0);
      for (const pair of pairs) expect(pair).toMatchObject({ local: 'relay', relayProtocol: 'tcp' });
    }
  });
});

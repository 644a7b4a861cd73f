// The address change of network-change.test.ts with the second engine on the
// moving end: a Chromium host in the root namespace and a Firefox ESR guest
// inside the guest's network namespace (test/helpers/netns.ts wrapperFor).
// puppeteer drives Firefox over a WebSocket on 127.0.0.1 inside that namespace,
// reached through forwardLoopback(); the page's origin (http://10.213.X.1:port)
// is not a secure context, so a pref lists it as one (getUserMedia needs it).
// The guest's address changes twice mid-call: its page says so, comes back as
// the same participant, and media flows both ways again (getStats on both sides).
import net from 'node:net';
import type { Page as ChromiumPage } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectMediaFlowing, inboundStats } from '../helpers/browser.js';
import {
  expectMediaFlowingFirefox,
  FIREFOX_PATH,
  firefoxParticipant,
  firefoxSkipReason,
  inboundStatsFirefox,
  joinFirefox,
  launchFirefox,
  testId,
} from '../helpers/firefox.js';
import { joinCall, startNetworkWorld, type NetworkWorld } from '../helpers/netns-world.js';
import { cleanupStale, createGuestNetwork, skipReasonOrThrow, type GuestNetwork } from '../helpers/netns.js';
import { sleep } from '../helpers/wait.js';

// Both throw or report nothing in CI: a missing tool fails the run there.
const skip = skipReasonOrThrow() ?? firefoxSkipReason();
if (skip) console.warn(skip);

type Stats = { framesDecoded: number; audioPackets: number };

let network: GuestNetwork | undefined;
let world: NetworkWorld | undefined;
let firefox: Browser | undefined;
const contexts: BrowserContext[] = [];
/** The Firefox page's console and errors, printed when the test fails. */
const guestLog: string[] = [];

async function freeLoopbackPort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

beforeAll(async () => {
  if (skip) return;
  cleanupStale();
  network = createGuestNetwork();
  world = await startNetworkWorld(network);
  const debuggingPort = await freeLoopbackPort();
  await network.forwardLoopback(debuggingPort);
  firefox = await launchFirefox({
    executablePath: network.wrapperFor(FIREFOX_PATH),
    debuggingPort,
    // http://10.213.X.1:port as a secure context: getUserMedia, as on https. (media.devices.insecure.enabled
    // with media.getusermedia.insecure.enabled work as well, but only for media; this is what https gives.)
    prefs: { 'dom.securecontext.allowlist': network.hostAddress },
  });
}, 90_000);

afterAll(async () => {
  // Each step on its own: whatever failed, nothing is left running (the guest's browser before its network).
  await Promise.allSettled(contexts.splice(0).map((c) => c.close()));
  await firefox?.close().catch(() => {});
  await world?.close().catch(() => {});
  network?.destroy();
});

/** Resolves once no video is decoded and no audio received for 300 ms: the change has bitten. */
async function stalled(stats: () => Promise<Stats>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = await stats();
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    await sleep(50);
    const now = await stats();
    if (now.framesDecoded !== last.framesDecoded || now.audioPackets !== last.audioPackets) quietSince = Date.now();
    else if (Date.now() - quietSince >= 300) return;
    last = now;
  }
  throw new Error('media never stopped after the address change');
}

/** Like netns-world's measureRecovery, for either engine: ms from `sinceMs` until both totals grow again. */
async function recovery(stats: () => Promise<Stats>, sinceMs: number, timeoutMs: number): Promise<number> {
  let last = await stats();
  const grown = { video: 0, audio: 0 };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await sleep(100);
    const now = await stats();
    // A peer connection replaced meanwhile starts from zero.
    grown.video += now.framesDecoded >= last.framesDecoded ? now.framesDecoded - last.framesDecoded : now.framesDecoded;
    grown.audio += now.audioPackets >= last.audioPackets ? now.audioPackets - last.audioPackets : now.audioPackets;
    last = now;
    if (grown.video > 0 && grown.audio > 0) return Date.now() - sinceMs;
    if (Date.now() > deadline) throw new Error(`media did not come back within ${timeoutMs} ms: grew by ${grown.video} frames, ${grown.audio} audio packets`);
  }
}

describe.skipIf(skip !== null)('a Firefox guest whose address changes mid-call', () => {
  it('recovers by itself, twice: the banner shows and goes, same participants, media back both ways', { timeout: 150_000 }, async () => {
    const room = await world!.createRoom();
    const host: ChromiumPage = await world!.hostPage();
    const participant = await firefoxParticipant(firefox!);
    contexts.push(participant.context);
    const guest: Page = participant.page;
    guest.on('console', (m) => guestLog.push(`${new Date().toISOString()} console.${m.type()}: ${m.text()}`));
    guest.on('pageerror', (e) => guestLog.push(`${new Date().toISOString()} pageerror: ${String(e)}`));
    const hostStats = () => inboundStats(host);
    const guestStats = () => inboundStatsFirefox(guest);

    try {
      await joinCall(host, room.host_join_url, 'Dr Lee');
      await joinFirefox(guest, room.guest_join_url, 'Fox');
      await Promise.all([expectMediaFlowingFirefox(guest), expectMediaFlowing(host)]);
      const participants = async () => ((await world!.api('GET', `/api/rooms/${room.token}`)).json.current_participants as string[]).sort();
      const before = await participants();
      expect(before).toHaveLength(2);

      for (let change = 1; change <= 2; change++) {
        const changedAt = Date.now();
        const address = network!.changeAddress();
        guestLog.push(`${new Date().toISOString()} test: guest address now ${address}`);
        const banner = guest.waitForSelector(testId('reconnecting'), { visible: true, timeout: 5000 }).then(() => Date.now() - changedAt);
        banner.catch(() => {}); // awaited below
        await stalled(guestStats);
        // While it recovers, the guest is still in the call for the integrator.
        expect(await participants()).toEqual(before);
        const [guestBack, hostBack] = await Promise.all([recovery(guestStats, changedAt, 20_000), recovery(hostStats, changedAt, 20_000)]);
        const bannerAfter = await banner;
        const both = Math.max(guestBack, hostBack);
        console.log(
          `Firefox guest, address change ${change}: banner after ${bannerAfter} ms; media back at the guest after ${guestBack} ms, at the host after ${hostBack} ms (both: ${both} ms)`,
        );
        expect(both).toBeLessThan(15_000);
        await guest.waitForSelector(testId('reconnecting'), { hidden: true, timeout: 10_000 });
        expect(await participants()).toEqual(before);
        await Promise.all([expectMediaFlowingFirefox(guest), expectMediaFlowing(host)]);
        await sleep(1000);
      }
      expect(await participants()).toEqual(before);
      const pcs = await guest.evaluate(() => (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs.length);
      console.log(`Firefox guest: ${pcs} peer connection(s) made over the call`);
    } catch (error) {
      console.log(`Firefox guest page log:\n${guestLog.join('\n')}`);
      throw error;
    }
  });
});

// The network summary of sessions that end on the SFU path (issue 41;
// docs/design.md, "Participant sessions"): three people in real headless
// Chromium move the call to Janus; once every page's publication has a send
// estimate, all three leave while the call still goes through Janus (it goes
// back to peer to peer only after the room stayed below the threshold a
// while), and each session keeps a summary of what its browser measured on
// the publication and the subscription: a round trip, a loss, the
// publication's bitrate (not the subscription's untouched 300 kbit/s), direct.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { join, type BrowserWorld } from '../helpers/browser.js';
import { everyoneSees, movedToSfu } from '../helpers/sfu.js';
import { startSfuWorld, watchedParticipant, type SfuWorld } from '../helpers/sfu-world.js';
import { eventually } from '../helpers/wait.js';

let sfu: SfuWorld;
let world: BrowserWorld;
/** The types of the signaling frames each page sent, in order. */
const sent = new Map<Page, string[]>();

beforeAll(async () => {
  sfu = await startSfuWorld();
  world = sfu.world;
}, 60_000);

afterAll(() => sfu?.close());

const participant = () => watchedParticipant(world, sent);

/** The page left while its SFU path was up: it published, and sent no `sfu-leave` between its last publication and `leave`. */
function leftOnSfuPath(types: string[]): boolean {
  const left = types.indexOf('leave');
  const published = types.lastIndexOf('sfu-publish', left);
  return left > 0 && published >= 0 && !types.slice(published, left).includes('sfu-leave');
}

/** The send estimates (kbit/s) of the page's open connections that send video: on the SFU path, its camera's publication. */
const publicationEstimates = (page: Page) =>
  page.evaluate(async () => {
    const estimates: number[] = [];
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState !== 'connected') continue;
      const byId = new Map<string, any>();
      (await pc.getStats()).forEach((s) => byId.set(s.id, s));
      const sendsVideo = [...byId.values()].some((s) => s.type === 'outbound-rtp' && s.kind === 'video');
      const transport = [...byId.values()].find((s) => s.type === 'transport' && s.selectedCandidatePairId);
      const kbps = byId.get(transport?.selectedCandidatePairId)?.availableOutgoingBitrate;
      if (sendsVideo && typeof kbps === 'number') estimates.push(Math.round(kbps / 1000));
    }
    return estimates;
  });

describe('sessions that end on the SFU path', () => {
  it('keep what each browser measured on its publication (upstream) and subscription (downstream)', async () => {
    const room = await world.createRoom();
    const pages = [await participant(), await participant(), await participant()];
    await join(pages[0]!, room.host_join_url, 'Dr. Ada');
    await join(pages[1]!, room.guest_join_url, 'Pat');
    await everyoneSees(pages.slice(0, 2), 1, 30_000);
    await join(pages[2]!, room.guest_join_url, 'Relative');
    await everyoneSees(pages, 2, 45_000);
    // The pictures come peer to peer first; each page publishes once they do (docs/design.md, "Group calls through an SFU", Mesh first).
    await movedToSfu(pages);
    for (const page of pages) expect(sent.get(page)).toContain('sfu-publish');

    // The subscription sends nothing: its send estimate stays at Chromium's starting 300 kbit/s. The camera's
    // publication's climbs as the video goes up; once it has on every page, everyone leaves, one after the other,
    // while the call still goes through Janus.
    const STARTING_ESTIMATE_KBPS = 300;
    await eventually(async () => (await Promise.all(pages.map(publicationEstimates))).every((kbps) => kbps.length === 1 && kbps[0]! > STARTING_ESTIMATE_KBPS), 30_000, 'every publication\'s estimate above the start');
    // And every tile's quality measured: the subscription sampled (what the loss is of), so that the summary does
    // not hang on the sample taken on leaving, which a loaded machine's getStats can miss (FLUSH_SAMPLE_MAX_MS).
    const measuredLevels = (page: Page) => page.evaluate(() => [...document.querySelectorAll<HTMLElement>('[data-testid="connection-quality"]')].map((bar) => bar.dataset.level));
    await eventually(async () => (await Promise.all(pages.map(measuredLevels))).every((levels) => levels.length === 2 && levels.every((level) => ['good', 'fair', 'poor'].includes(level ?? ''))), 30_000, 'every tile\'s quality measured');
    const estimates: number[][] = [];
    for (const page of [...pages].reverse()) {
      estimates.unshift(await publicationEstimates(page));
      await page.getByTestId('leave-button').click();
      await page.getByTestId('feedback-skip').waitFor();
    }
    for (const [index, page] of pages.entries()) expect(leftOnSfuPath(sent.get(page)!), `page ${index} sent ${JSON.stringify(sent.get(page))}`).toBe(true);

    const { json } = await world.api('GET', `/api/rooms/${room.token}/sessions`);
    const sessions: Record<string, any>[] = json.sessions;
    console.log(`[sfu] network summaries ${JSON.stringify(sessions.map((s) => [s.display_name, s.network]))}; publications' send estimates when leaving ${JSON.stringify(estimates)} kbit/s`);
    expect(sessions.map((s) => s.display_name)).toEqual(['Dr. Ada', 'Pat', 'Relative']);
    for (const session of sessions) {
      expect(session.left_at).not.toBeNull();
      // Chromium reports all four figures on the SFU path's connections too; no TURN here, so direct.
      expect(session.network, `the session of ${session.display_name}: ${JSON.stringify(session)}`).toMatchObject({
        rtt_ms: expect.any(Number),
        loss_percent: expect.any(Number),
        bitrate_kbps: expect.any(Number),
        relayed: false,
      });
      expect(session.network.reports).toBeGreaterThanOrEqual(1);
      expect(session.network.rtt_ms).toBeGreaterThanOrEqual(0);
      expect(session.network.rtt_ms).toBeLessThan(5000);
      expect(session.network.loss_percent).toBeGreaterThanOrEqual(0);
      expect(session.network.loss_percent).toBeLessThanOrEqual(100);
      // The publication's estimate, not the subscription's untouched start (what was reported before issue 41's fix).
      expect(session.network.bitrate_kbps, `${session.display_name}'s bitrate`).toBeGreaterThan(STARTING_ESTIMATE_KBPS);
    }
  }, 150_000);
});

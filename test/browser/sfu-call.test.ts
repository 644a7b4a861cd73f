// Group calls through Janus in real headless Chromium (docs/design.md, "Group
// calls through an SFU"): two people stay peer to peer; a third moves the call
// to the SFU; with four, everyone decodes everyone, each page sends its video
// to one address (Janus's) and uploads at most about twice what it uploads in
// a call of two (from getStats); back at two the call returns to peer to
// peer. A real Janus started by the test gathers on the machine's own
// non-loopback interface (Janus skips loopback).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { join, startWorld, type BrowserWorld } from '../helpers/browser.js';
import { startTestJanus } from '../helpers/janus.js';
import { eventually, sleep } from '../helpers/wait.js';
import type { LocalJanus } from '../../src/local-janus.js';

let janus: LocalJanus;
let world: BrowserWorld;
/** The types of the signaling frames each page sent. */
const sent = new Map<Page, string[]>();

beforeAll(async () => {
  janus = await startTestJanus();
  world = await startWorld({ SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret });
}, 60_000);

afterAll(async () => {
  await world?.close();
  await janus?.stop();
});

async function participant(): Promise<Page> {
  const page = await world.participant({ viewport: { width: 800, height: 600 } });
  const types: string[] = [];
  sent.set(page, types);
  page.on('websocket', (socket) => socket.on('framesent', ({ payload }) => types.push(String(JSON.parse(String(payload)).type))));
  return page;
}

/** Remote pictures the page shows and decodes (a remote-video with frames). */
const picturesShown = (page: Page) =>
  page.evaluate(() => [...document.querySelectorAll<HTMLVideoElement>('[data-testid="remote-video"]')].filter((v) => v.videoWidth > 0 && v.readyState >= 2).length);

/** Waits until every page shows `n` remote pictures; the counts are in the error otherwise. */
async function everyoneSees(pages: Page[], n: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await Promise.all(pages.map(picturesShown));
    if (counts.every((count) => count === n)) return;
    if (Date.now() > deadline) throw new Error(`pages show ${JSON.stringify(counts)} pictures, not ${n} each, after ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** Bytes of video sent so far on the page's open connections, and the remote addresses the video goes to. */
const upload = (page: Page) =>
  page.evaluate(async () => {
    let bytes = 0;
    const addresses = new Set<string>();
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState !== 'connected') continue;
      const stats = await pc.getStats();
      const byId = new Map<string, any>();
      stats.forEach((s) => byId.set(s.id, s));
      let sendsVideo = false;
      stats.forEach((s) => {
        if (s.type === 'outbound-rtp' && s.kind === 'video') {
          bytes += s.bytesSent ?? 0;
          sendsVideo = true;
        }
      });
      stats.forEach((s) => {
        if (sendsVideo && s.type === 'transport' && s.selectedCandidatePairId) {
          const remote = byId.get(byId.get(s.selectedCandidatePairId)?.remoteCandidateId);
          if (remote) addresses.add(`${remote.address ?? remote.ip}:${remote.port}`);
        }
      });
    }
    return { bytes, addresses: [...addresses] };
  });

/** Video bytes a second the page uploads, over `ms`. */
async function uploadRate(page: Page, ms = 6000): Promise<number> {
  const before = await upload(page);
  await sleep(ms);
  const after = await upload(page);
  return ((after.bytes - before.bytes) * 1000) / ms;
}

describe('a call through Janus', () => {
  const pages: Page[] = [];
  let room: Record<string, any>;
  let twoPersonUpload = 0;

  it('keeps two people peer to peer', async () => {
    room = await world.createRoom();
    pages.push(await participant(), await participant());
    await join(pages[0]!, room.host_join_url, 'Dr. Ada');
    await join(pages[1]!, room.guest_join_url, 'Pat');
    await everyoneSees(pages, 1, 20_000);
    // Let the encoders reach their rate before measuring what one page uploads.
    await sleep(4000);
    twoPersonUpload = await uploadRate(pages[0]!);
    for (const page of pages) expect(sent.get(page)).not.toContain('sfu-publish');
  }, 60_000);

  it('moves to the SFU with a third person, and with four everyone decodes everyone', async () => {
    pages.push(await participant());
    await join(pages[2]!, room.guest_join_url, 'Relative');
    await everyoneSees(pages, 2);
    for (const page of pages) expect(sent.get(page)).toContain('sfu-publish');
    pages.push(await participant());
    await join(pages[3]!, room.guest_join_url, 'Interpreter');
    await everyoneSees(pages, 3);
  }, 90_000);

  it('has each page send its video to one address, uploading at most about twice a call of two', async () => {
    await sleep(4000);
    for (const page of pages) expect((await upload(page)).addresses).toHaveLength(1);
    // Simulcast: the camera goes up in two layers (rid h and l), of which each subscriber gets one.
    const layers = await pages[0]!.evaluate(async () => {
      const rids: string[] = [];
      for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
        if (pc.connectionState !== 'connected') continue;
        (await pc.getStats()).forEach((s) => s.type === 'outbound-rtp' && s.kind === 'video' && (s.bytesSent ?? 0) > 0 && rids.push(String(s.rid)));
      }
      return rids.sort();
    });
    console.log(`[sfu] host sends video layers ${JSON.stringify(layers)}`);
    expect(layers).toEqual(['h', 'l']);
    const fourPersonUpload = await uploadRate(pages[0]!);
    const ratio = fourPersonUpload / twoPersonUpload;
    console.log(`[sfu] host upload: two people ${Math.round((twoPersonUpload * 8) / 1000)} kbit/s, four through Janus ${Math.round((fourPersonUpload * 8) / 1000)} kbit/s (${ratio.toFixed(2)}x)`);
    expect(ratio).toBeLessThanOrEqual(2.2);
  }, 60_000);

  it('goes back to peer to peer when two remain', async () => {
    for (const page of pages.splice(2)) await page.getByTestId('leave-button').click();
    await everyoneSees(pages, 1);
    // Back peer to peer: each page's video goes to the other's address, not Janus's, and flows.
    await eventually(async () => (await Promise.all(pages.map(async (page) => (await upload(page)).addresses.length))).every((n) => n === 1), 30_000, 'one connection each');
    await eventually(async () => sent.get(pages[0]!)!.includes('sfu-leave'), 30_000, 'the SFU path left');
    const rate = await uploadRate(pages[0]!, 3000);
    expect(rate).toBeGreaterThan(0);
  }, 90_000);
});

// The move of a call from peer to peer to Janus when a third person comes,
// make-before-break (docs/design.md, "Group calls through an SFU"): the two
// pages already there never stop decoding each other's video during the move
// (the frames of the video their tile shows, sampled from getStats every
// 50 ms: each tile goes straight from the peer-to-peer video, its connection
// still open, to the SFU's, already decoding; the longest gap is printed, not
// bounded: a loaded machine's fresh subscription can pause as long as breaking
// first did, 1.1 s at load 8 against 1.1-1.2 s), their
// tiles keep a picture throughout, each plays one path's sound per peer, and
// once moved every page's video goes to Janus only, no peer-to-peer
// connection left. Breaking first (every peer-to-peer connection closed as
// the third person arrived) left each picture frozen until Janus brought it.
// Both ways up: from none (started when the third person comes, the
// default), and with SFU_WARM=true from a warm SFU path (the two's
// publications silent at Janus, switched on), which goes back to warm at two
// and is left by one alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { join, type BrowserWorld } from '../helpers/browser.js';
import { everyoneSees, everyoneWarm } from '../helpers/sfu.js';
import { startSfuWorld, upload, watchedParticipant, type SfuWorld } from '../helpers/sfu-world.js';
import { eventually, sleep } from '../helpers/wait.js';

/** A world of its own for each describe below: SFU_WARM as it says, started in its beforeAll. */
function sfuWorldFor(env: Record<string, string>): () => BrowserWorld {
  let sfu: SfuWorld;
  beforeAll(async () => {
    sfu = await startSfuWorld(env);
  }, 60_000);
  afterAll(() => sfu?.close());
  return () => sfu.world;
}

interface Sample {
  at: number;
  /** The id of the video track the tile shows. */
  shown: string | null;
  /** Frames decoded so far by every inbound video of the page's open connections, by track id. */
  frames: Record<string, number>;
  /** The tile shows a picture. */
  picture: boolean;
  /** Sound tracks the page's remote <video>s play, each. */
  sounds: number[];
}

/** Samples, every 50 ms until stopWatching, the video shown in the tile of `name`. */
const watch = (page: Page, name: string) =>
  page.evaluate((name) => {
    const samples: unknown[] = [];
    const w = window as unknown as { __samples: unknown[]; __watching: ReturnType<typeof setInterval>; __pcs: RTCPeerConnection[] };
    w.__samples = samples;
    w.__watching = setInterval(async () => {
      const videos = [...document.querySelectorAll<HTMLVideoElement>('[data-testid="remote-video"]')];
      const video = videos.find((v) => v.getAttribute('aria-label') === `Video of ${name}`);
      const stream = video?.srcObject instanceof MediaStream ? video.srcObject : null;
      // What the tile shows, read before the stats: the tile's stream keeps its identity while its tracks change, so
      // read after the awaits (longer on a loaded machine) it could name a track switched to after its frames were read.
      const at = Date.now();
      const shown = stream?.getVideoTracks()[0]?.id ?? null;
      const picture = !!video && video.videoWidth > 0 && video.readyState >= 2;
      const frames: Record<string, number> = {};
      for (const pc of w.__pcs) {
        if (pc.connectionState === 'closed') continue;
        const report = await pc.getStats().catch(() => null);
        report?.forEach((s) => {
          if (s.type === 'inbound-rtp' && s.kind === 'video' && s.trackIdentifier) frames[s.trackIdentifier] = s.framesDecoded ?? 0;
        });
      }
      const sounds = videos.map((v) => (v.srcObject instanceof MediaStream ? v.srcObject.getAudioTracks().length : 0));
      samples.push({ at, shown, frames, picture, sounds });
    }, 50);
  }, name);

const stopWatching = (page: Page) =>
  page.evaluate(() => {
    const w = window as unknown as { __samples: Sample[]; __watching: ReturnType<typeof setInterval> };
    clearInterval(w.__watching);
    return w.__samples;
  });

/** The longest time (ms) the video shown in the tile went without a new decoded frame, when it ended, and when the tile's video changed (ms from `since`). */
function longestGap(samples: Sample[], since: number): { ms: number; endedAt: number; switchedAt: number[] } {
  const sorted = [...samples].sort((a, b) => a.at - b.at);
  let lastGrowth = sorted[0]!.at;
  let longest = { ms: 0, endedAt: 0 };
  const switchedAt: number[] = [];
  for (const [i, sample] of sorted.entries()) {
    if (i > 0 && sample.shown !== sorted[i - 1]!.shown) switchedAt.push(sample.at - since);
    const before = i > 0 && sample.shown ? sorted[i - 1]!.frames[sample.shown] : undefined;
    const now = sample.shown ? sample.frames[sample.shown] : undefined;
    if (before === undefined || now === undefined || now <= before) continue;
    if (sample.at - lastGrowth > longest.ms) longest = { ms: sample.at - lastGrowth, endedAt: sample.at - since };
    lastGrowth = sample.at;
  }
  if (sorted.at(-1)!.at - lastGrowth > longest.ms) longest = { ms: sorted.at(-1)!.at - lastGrowth, endedAt: sorted.at(-1)!.at - since };
  return { ...longest, switchedAt };
}

/**
 * Each change of the video the tile shows, from one track to another: whether the one it left was still
 * coming in (its connection open, so in the sample's frames) and whether the one it took had decoded frames.
 */
function switches(samples: Sample[]): { from: string; leftOpen: boolean; to: string; decoding: boolean }[] {
  const sorted = [...samples].sort((a, b) => a.at - b.at);
  return sorted.slice(1).flatMap((sample, i) => {
    const before = sorted[i]!;
    if (!before.shown || !sample.shown || before.shown === sample.shown) return [];
    return [{ from: before.shown, leftOpen: before.frames[before.shown] !== undefined, to: sample.shown, decoding: (sample.frames[sample.shown] ?? 0) > 0 }];
  });
}

/**
 * The page's call connections still open (a remote description given), each as the directions of its remote SDP's
 * media: Janus's are one way (its answer to a publication `recvonly`, its subscription offer `sendonly`), a peer's `sendrecv`.
 */
const openConnections = (page: Page) =>
  page.evaluate(() =>
    (window as unknown as { __pcs: (RTCPeerConnection & { __remote?: boolean })[] }).__pcs
      .filter((pc) => pc.__remote && pc.connectionState !== 'closed')
      .map((pc) => [...new Set((pc.remoteDescription?.sdp ?? '').match(/^a=(sendonly|recvonly|sendrecv|inactive)/gm) ?? [])].join(' ')),
  );

/** Two people, then a third (once the two's SFU path is warm, or at once): the move, watched from the two pages. */
async function moveWithThirdPerson(world: BrowserWorld, warm: boolean): Promise<void> {
  await world.closeContexts();
  const room = await world.createRoom();
  const [host, guest, third] = [await world.participant({ viewport: { width: 800, height: 600 } }), await world.participant({ viewport: { width: 800, height: 600 } }), await world.participant({ viewport: { width: 800, height: 600 } })];
  await join(host, room.host_join_url, 'Dr. Ada');
  await join(guest, room.guest_join_url, 'Pat');
  await everyoneSees([host, guest], 1, 20_000);
  // Peer to peer: one connection each from the other browser, and the two to Janus once warm.
  if (warm) await everyoneWarm([host, guest]);
  expect((await openConnections(host)).filter((directions) => directions.includes('sendrecv'))).toHaveLength(1);
  await Promise.all([watch(host, 'Pat'), watch(guest, 'Dr. Ada')]);
  const joinedAt = Date.now();
  await join(third, room.guest_join_url, 'Relative');
  await everyoneSees([host, guest, third], 2);
  // Moved: every page has its publication and its subscription to Janus open, no connection to a browser.
  const pages = [host, guest, third];
  const toJanusOnly = (open: string[]) => open.length === 2 && open.every((directions) => !directions.includes('sendrecv'));
  let open: string[][] = [];
  await eventually(async () => (open = await Promise.all(pages.map(openConnections))).every(toJanusOnly), 20_000, 'only the connections to Janus left').catch((error: Error) => {
    throw new Error(`${error.message}: open connections' directions ${JSON.stringify(open)}`);
  });
  const movedMs = Date.now() - joinedAt;
  const sessions = await Promise.all(pages.map(openConnections));
  for (const page of pages) expect((await upload(page)).addresses).toHaveLength(1);
  // A second after the move, still decoding.
  await sleep(1000);
  const samples = await Promise.all([stopWatching(host), stopWatching(guest)]);
  const gaps = samples.map((page) => longestGap(page, joinedAt));
  const blank = samples.map((page) => page.filter((sample) => !sample.picture).map((sample) => sample.at - joinedAt));
  console.log(`[sfu-handover] ${warm ? 'warm' : 'cold'}: moved ${movedMs} ms after the third Join; longest gap in the other's video (ms, and when it ended and the tile's video changed, ms after that Join): host ${JSON.stringify(gaps[0])}, guest ${JSON.stringify(gaps[1])} (${samples.map((s) => s.length).join(', ')} samples); no picture at ${JSON.stringify(blank)} ms; open connections' directions ${JSON.stringify(sessions)}`);
  for (const page of samples) {
    // The tile kept a picture, and no tile ever played two sound tracks.
    expect(page.filter((sample) => !sample.picture).length).toBe(0);
    expect(page.flatMap((sample) => sample.sounds).every((sounds) => sounds <= 1)).toBe(true);
  }
  // Make-before-break: each tile went from the peer-to-peer video, its connection still open, to the SFU's, already
  // decoding (breaking first closed the connection as the third person came, and the tile waited without a picture).
  for (const page of samples) {
    const changes = switches(page);
    expect(changes.length, JSON.stringify(changes)).toBeGreaterThan(0);
    for (const change of changes) expect(change, JSON.stringify(changes)).toMatchObject({ leftOpen: true, decoding: true });
  }
  await everyoneSees(pages, 2);
}

describe('the move to Janus with a third person', () => {
  const world = sfuWorldFor({});

  it('never stops the two pages already there decoding each other, and leaves every page sending to Janus only', async () => {
    await moveWithThirdPerson(world(), false);
  }, 120_000);
});

describe('the move from a warm SFU path (SFU_WARM=true)', () => {
  const world = sfuWorldFor({ SFU_WARM: 'true' });
  /** The types of the signaling frames each page sent. */
  const sent = new Map<Page, string[]>();

  it('keeps two people peer to peer, their SFU path published and subscribed but silent', async () => {
    await world().closeContexts();
    const room = await world().createRoom();
    const pages = [await watchedParticipant(world(), sent), await watchedParticipant(world(), sent)];
    await join(pages[0]!, room.host_join_url, 'Dr. Ada');
    await join(pages[1]!, room.guest_join_url, 'Pat');
    await everyoneSees(pages, 1, 20_000);
    await everyoneWarm(pages);
    for (const page of pages) expect(sent.get(page)).toEqual(expect.arrayContaining(['sfu-publish', 'sfu-subscribe']));
    // The video goes to the other browser only, and comes from it.
    for (const page of pages) expect((await upload(page)).addresses).toHaveLength(1);
    for (const page of pages) expect((await openConnections(page)).filter((directions) => directions.includes('sendrecv'))).toHaveLength(1);
  }, 60_000);

  it('never stops the two pages already there decoding each other, and leaves every page sending to Janus only', async () => {
    await moveWithThirdPerson(world(), true);
  }, 120_000);

  it('goes back to a warm path when two remain, and leaves it when one is alone', async () => {
    await world().closeContexts();
    const room = await world().createRoom();
    const pages = [await watchedParticipant(world(), sent), await watchedParticipant(world(), sent), await watchedParticipant(world(), sent)];
    for (const [i, page] of pages.entries()) await join(page, i === 0 ? room.host_join_url : room.guest_join_url, ['Dr. Ada', 'Pat', 'Relative'][i]!);
    await everyoneSees(pages, 2);
    await pages[2]!.getByTestId('leave-button').click();
    const two = pages.slice(0, 2);
    // Back peer to peer once the room stayed at two for a while (path-choice.ts), the SFU path warm again, not left.
    await eventually(async () => (await Promise.all(two.map(async (page) => (await upload(page)).addresses.length))).every((n) => n === 1), 30_000, 'one connection each sending video');
    await everyoneWarm(two);
    await everyoneSees(two, 1);
    for (const page of two) expect(sent.get(page)).not.toContain('sfu-leave');
    await pages[1]!.getByTestId('leave-button').click();
    await eventually(async () => sent.get(pages[0]!)!.includes('sfu-leave'), 30_000, 'the SFU path left by the one alone');
  }, 120_000);
});

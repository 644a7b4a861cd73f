// What the SFU's browser tests read of a page (docs/design.md, "Group calls
// through an SFU"), in Chromium (playwright) or Firefox (puppeteer) alike.
import type { AnyPage } from './browser.js';
import { sleep } from './wait.js';

type Evaluating = { evaluate<T>(fn: () => T | Promise<T>): Promise<T> };

/** Remote pictures the page shows and decodes (a remote-video with frames). */
export const picturesShown = (page: AnyPage) =>
  (page as unknown as Evaluating).evaluate(
    () => [...document.querySelectorAll<HTMLVideoElement>('[data-testid="remote-video"]')].filter((v) => v.videoWidth > 0 && v.readyState >= 2).length,
  );

/** Waits until every page shows `n` remote pictures; the counts are in the error otherwise. */
export async function everyoneSees(pages: AnyPage[], n: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const counts = await Promise.all(pages.map(picturesShown));
    if (counts.every((count) => count === n)) return;
    if (Date.now() > deadline) throw new Error(`pages show ${JSON.stringify(counts)} pictures, not ${n} each, after ${timeoutMs} ms`);
    await sleep(200);
  }
}

/**
 * The page's open call connections to another browser: every media direction `sendrecv` in their remote SDP (Janus's
 * are one way: its answer to a publication `recvonly`, its subscription offer `sendonly`; Firefox shows a `sendrecv` too).
 */
const peerToPeerOpen = (page: AnyPage) =>
  (page as unknown as Evaluating).evaluate(
    () =>
      (window as unknown as { __pcs: (RTCPeerConnection & { __remote?: boolean })[] }).__pcs.filter((pc) => {
        if (!pc.__remote || pc.connectionState === 'closed') return false;
        const directions = (pc.remoteDescription?.sdp ?? '').match(/^a=(sendrecv|sendonly|recvonly|inactive)\s*$/gm) ?? [];
        return directions.length > 0 && directions.every((line) => line.trim() === 'a=sendrecv');
      }).length,
  );

/**
 * Waits until no page keeps a peer-to-peer connection: the move to the SFU is over (each peer's media moves when it
 * comes through Janus, docs/design.md "Group calls through an SFU"; until then a fault of Janus stops no picture).
 */
export async function movedToSfu(pages: AnyPage[], timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await Promise.all(pages.map(peerToPeerOpen));
    if (open.every((n) => n === 0)) return;
    if (Date.now() > deadline) throw new Error(`peer-to-peer connections still open ${JSON.stringify(open)} after ${timeoutMs} ms`);
    await sleep(200);
  }
}

/**
 * Whether the page's SFU path is warm (docs/design.md, "Group calls through an SFU", Warm path): a connected
 * publication to Janus (its answer `recvonly`) whose senders carry no track, and a connected subscription.
 */
export const sfuWarm = (page: AnyPage) =>
  (page as unknown as Evaluating).evaluate(() => {
    // No named helper inside: a bench's tsx would name it with a function the page does not have.
    let silentPublication = false;
    let subscription = false;
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState !== 'connected') continue;
      const directions = new Set((pc.remoteDescription?.sdp ?? '').match(/^a=(sendrecv|sendonly|recvonly|inactive)/gm) ?? []);
      if (directions.has('a=recvonly') && pc.getSenders().length > 0 && pc.getSenders().every((sender) => sender.track === null)) silentPublication = true;
      if (directions.has('a=sendonly') && !directions.has('a=sendrecv')) subscription = true;
    }
    return silentPublication && subscription;
  });

/** Waits until every page's SFU path is warm (sfuWarm). */
export async function everyoneWarm(pages: AnyPage[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const warm = await Promise.all(pages.map(sfuWarm));
    if (warm.every(Boolean)) return;
    if (Date.now() > deadline) throw new Error(`SFU paths warm ${JSON.stringify(warm)} after ${timeoutMs} ms`);
    await sleep(200);
  }
}

/** The rids of the video layers the page is sending on its connected connections (simulcast: h and l). */
export const videoLayers = (page: AnyPage) =>
  (page as unknown as Evaluating).evaluate(async () => {
    const rids: string[] = [];
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState !== 'connected') continue;
      (await pc.getStats()).forEach((s) => s.type === 'outbound-rtp' && s.kind === 'video' && (s.bytesSent ?? 0) > 0 && rids.push(String(s.rid)));
    }
    return rids.sort();
  });

/** Video frames decoded so far by each inbound stream of the page's open connections (getStats: RTP that arrived, not a picture shown again). */
const streamFrames = (page: AnyPage) =>
  (page as unknown as Evaluating).evaluate(async () => {
    const frames: Record<string, number> = {};
    for (const [index, pc] of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs.entries()) {
      if (pc.connectionState === 'closed') continue;
      (await pc.getStats()).forEach((s) => {
        if (s.type === 'inbound-rtp' && s.kind === 'video') frames[`${index}/${s.id}`] = s.framesDecoded ?? 0;
      });
    }
    return frames;
  });

/** For each page, how many of its inbound video streams decoded frames between two looks `gapMs` apart. */
async function growing(pages: AnyPage[], gapMs: number): Promise<number[]> {
  const before = await Promise.all(pages.map(streamFrames));
  await sleep(gapMs);
  const after = await Promise.all(pages.map(streamFrames));
  return after.map((frames, i) => Object.entries(frames).filter(([id, n]) => n > (before[i]![id] ?? Infinity)).length);
}

/**
 * After a fault at `sinceMs` (Janus killed or frozen, an address changed):
 * waits until every page has a picture that stopped (the fault bit, so what
 * follows is a recovery and not frames still in the jitter buffer), then
 * until every page shows `n` pictures all decoding new frames, and returns
 * the ms from `sinceMs` to then. Read from getStats (frames decoded per
 * inbound stream), not from the <video>s, whose counters were seen to grow
 * with no media arriving.
 */
export async function mediaBackAfter(pages: AnyPage[], n: number, sinceMs: number, timeoutMs = 60_000): Promise<number> {
  const deadline = sinceMs + timeoutMs;
  const stalled = new Set<number>();
  while (stalled.size < pages.length) {
    if (Date.now() > deadline) throw new Error(`the fault never stopped a picture on ${pages.length - stalled.size} pages within ${timeoutMs} ms`);
    (await growing(pages, 300)).forEach((flowing, i) => flowing < n && stalled.add(i));
  }
  for (;;) {
    const flowing = await growing(pages, 150);
    if (flowing.every((count) => count >= n)) return Date.now() - sinceMs;
    if (Date.now() > deadline) throw new Error(`media not back on every page within ${timeoutMs} ms: video streams decoding ${JSON.stringify(flowing)}, not ${n} each`);
  }
}

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

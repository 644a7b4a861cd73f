// Several participants reloading their pages at the same moment and pressing
// Join again together, and what "everyone sees everyone again" means: media
// arriving now, not frames decoded before the reload (test/browser and
// test/cluster reload-together tests).
import type { Page } from 'playwright-core';
import { sleep } from './wait.js';

/** Inbound media of every connection the page made (window.__pcs), by its place there; null for a closed one. */
function inboundByIndex(page: Page): Promise<({ frames: number; audio: number } | null)[]> {
  return page.evaluate(async () =>
    Promise.all(
      (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs.map(async (pc) => {
        if (pc.connectionState === 'closed') return null;
        const one = { frames: 0, audio: 0 };
        (await pc.getStats()).forEach((s) => {
          if (s.type === 'inbound-rtp' && s.kind === 'video') one.frames += s.framesDecoded ?? 0;
          if (s.type === 'inbound-rtp' && s.kind === 'audio') one.audio += s.packetsReceived ?? 0;
        });
        return one;
      }),
    ),
  );
}

/** How many of the page's connections bring video frames and audio packets now (both grew over `windowMs`). */
export async function connectionsFlowingNow(page: Page, windowMs = 500): Promise<number> {
  const before = await inboundByIndex(page);
  await sleep(windowMs);
  const after = await inboundByIndex(page);
  return after.filter((b, i) => {
    const a = before[i];
    return a && b && b.frames > a.frames && b.audio > a.audio;
  }).length;
}

/** Waits until media arrives now from `peers` connections of the page; throws with what each connection brings after `timeoutMs`. */
export async function flowingFrom(page: Page, peers: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await connectionsFlowingNow(page)) >= peers) return;
    if (Date.now() > deadline) {
      const states = await page.evaluate(() => (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs.map((pc) => `${pc.connectionState}/${pc.signalingState}`));
      throw new Error(`media from ${peers} peer(s) not arriving within ${timeoutMs} ms; connections: ${states.join(', ')}; inbound ${JSON.stringify(await inboundByIndex(page))}`);
    }
  }
}

/**
 * Reloads every page at once, presses Join on all of them together (the name
 * is offered again from sessionStorage), and waits until each gets media from
 * all the others. Returns the ms from the reload to the last page flowing.
 */
export async function reloadTogether(pages: Page[], pressJoin: (page: Page) => Promise<void>, withinMs: number): Promise<number> {
  const started = Date.now();
  await Promise.all(pages.map((page) => page.reload()));
  await Promise.all(pages.map((page) => page.getByTestId('join-button').waitFor()));
  await Promise.all(pages.map((page) => pressJoin(page)));
  await Promise.all(
    pages.map((page, i) =>
      flowingFrom(page, pages.length - 1, withinMs).catch((error: Error) => {
        throw new Error(`page ${i + 1} of ${pages.length}, ${Date.now() - started} ms after the reload: ${error.message}`);
      }),
    ),
  );
  return Date.now() - started;
}

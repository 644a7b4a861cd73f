// A browser world whose calls go through a Janus of its own (docs/design.md,
// "Group calls through an SFU"): what the SFU's Chromium test files start in
// their beforeAll, the pages they watch the signaling of, and what a page
// uploads.
import type { Page } from 'playwright-core';
import type { LocalJanus } from '../../src/local-janus.js';
import { startWorld, type BrowserWorld } from './browser.js';
import { startTestJanus } from './janus.js';

export interface SfuWorld {
  world: BrowserWorld;
  janus: LocalJanus;
  close(): Promise<void>;
}

/** A Janus the test starts, and a world whose server sends every call of three or more through it (`env`: more settings, SFU_WARM). */
export async function startSfuWorld(env: Record<string, string> = {}): Promise<SfuWorld> {
  const janus = await startTestJanus();
  try {
    const world = await startWorld({ SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret, ...env });
    return {
      world,
      janus,
      async close() {
        await world.close();
        await janus.stop();
      },
    };
  } catch (error) {
    await janus.stop();
    throw error;
  }
}

/** A participant's page at 800x600 whose signaling frames' types are appended to `sent` under it, in order. */
export async function watchedParticipant(world: BrowserWorld, sent: Map<Page, string[]>): Promise<Page> {
  const page = await world.participant({ viewport: { width: 800, height: 600 } });
  const types: string[] = [];
  sent.set(page, types);
  page.on('websocket', (socket) => socket.on('framesent', ({ payload }) => types.push(String(JSON.parse(String(payload)).type))));
  return page;
}

/**
 * Bytes of video sent so far on the page's open connections that send a camera or screen, and the remote addresses
 * the video goes to (a warm SFU publication, its senders without a track, sends nothing and is not counted).
 */
export const upload = (page: Page) =>
  page.evaluate(async () => {
    let bytes = 0;
    const addresses = new Set<string>();
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState !== 'connected' || !pc.getSenders().some((sender) => sender.track?.kind === 'video')) continue;
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

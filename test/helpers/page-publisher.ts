// A Chromium page publishing its fake camera and microphone straight to a
// VideoRoom publisher (src/sfu/video-room.ts), without Parley's pages or
// signaling: what the recording test and benchmark need of a participant
// (docs/design.md, "Recording with consent"). The page is served from
// 127.0.0.1 (a secure context, so getUserMedia works); its offer is sent once
// its candidates are gathered, Janus's answer (with its candidates) completes it.
import http from 'node:http';
import type net from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { Publisher } from '../../src/sfu/video-room.js';
import { CHROMIUM_ARGS } from './browser.js';

export interface PublishingBrowser {
  browser: Browser;
  /** A new page (its own context) publishing through `publisher`; `screen`: a fake screen instead of the camera. */
  publish(publisher: Publisher, options?: { screen?: boolean }): Promise<Page>;
  /** Whether the page's connection to Janus is up and sending video. */
  sending(page: Page): Promise<boolean>;
  close(): Promise<void>;
}

const PAGE = '<!doctype html><title>publisher</title>';

export async function startPublishingBrowser(): Promise<PublishingBrowser> {
  const server = http.createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  return {
    browser,
    async publish(publisher, options = {}) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(origin);
      const offer = await page.evaluate(async (screen) => {
        const stream = screen
          ? await navigator.mediaDevices.getDisplayMedia({ video: true })
          : await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } });
        const pc = new RTCPeerConnection();
        (window as unknown as { pc: RTCPeerConnection }).pc = pc;
        for (const track of stream.getTracks()) pc.addTransceiver(track, { direction: 'sendonly', streams: [stream] });
        await pc.setLocalDescription(await pc.createOffer());
        if (pc.iceGatheringState !== 'complete') {
          await new Promise<void>((resolve) => pc.addEventListener('icegatheringstatechange', () => pc.iceGatheringState === 'complete' && resolve()));
        }
        return { type: 'offer' as const, sdp: pc.localDescription!.sdp };
      }, options.screen === true);
      const answer = await publisher.publish(offer);
      await page.evaluate((remote) => (window as unknown as { pc: RTCPeerConnection }).pc.setRemoteDescription(remote as RTCSessionDescriptionInit), answer);
      return page;
    },
    sending: (page) =>
      page.evaluate(async () => {
        const pc = (window as unknown as { pc: RTCPeerConnection }).pc;
        if (pc.connectionState !== 'connected') return false;
        let frames = 0;
        (await pc.getStats()).forEach((s) => s.type === 'outbound-rtp' && s.kind === 'video' && (frames += s.framesEncoded ?? 0));
        return frames > 0;
      }),
    async close() {
      await browser.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

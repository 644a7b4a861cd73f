// Does a connection's ICE gathering wait for the page's main thread? In
// headless Chromium (test/README.md, "Real browsers on these machines"), a connection made ahead with its
// offer, as web/src/spare-connection.ts prepareConnection does, applies the offer and
// then the page is either idle or busy (one 60 ms task, then three of 15 ms:
// the call screen's first render and what follows it). Reported: when the
// gathering state changed and when the first candidate came, ms after
// setLocalDescription. Variants: `idle`, `busy`, and `busy-pool`
// (iceCandidatePoolSize 1 while the join screen shows, the ICE servers
// unchanged after; the call's servers come with `joined` and would differ).
//   npm run bench:ice-gathering -- [--runs=5]
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../test/helpers/browser.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

type Variant = 'idle' | 'busy' | 'busy-pool';
const variants: Variant[] = ['idle', 'busy', 'busy-pool'];
const runs = Number(flags().get('runs') ?? 5);

// getUserMedia needs a secure context: a blank page on 127.0.0.1.
const server = http.createServer((_request, response) => response.end('<!doctype html><title>gathering</title>')).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
const version = browser.version();
const results = new Map<Variant, { gathering: number[]; candidate: number[] }>(variants.map((v) => [v, { gathering: [], candidate: [] }]));
try {
  for (let run = 0; run < runs; run++) {
    for (const variant of variants) {
      const page = await browser.newPage();
      await page.goto(url);
      // Kept free of inner named functions: tsx would wrap those in a helper the page lacks.
      const timing = await page.evaluate(async (variant: Variant) => {
        const stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: true });
        const pc = new RTCPeerConnection(variant === 'busy-pool' ? { iceCandidatePoolSize: 1 } : {});
        for (const track of stream.getTracks()) pc.addTrack(track, stream);
        const offer = await pc.createOffer();
        // The person looks at the join screen for a moment.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        const start = performance.now();
        const candidate = new Promise<number>((resolve) => (pc.onicecandidate = () => resolve(performance.now() - start)));
        const gathering = new Promise<number>((resolve) => (pc.onicegatheringstatechange = () => resolve(performance.now() - start)));
        pc.setConfiguration({ ...pc.getConfiguration(), iceServers: [] });
        void pc.setLocalDescription(offer);
        if (variant !== 'idle') {
          for (const ms of [60, 15, 15, 15]) {
            // Each a task of its own, the first one the task that applied the offer.
            if (ms !== 60) await new Promise((resolve) => setTimeout(resolve, 0));
            const end = performance.now() + ms;
            while (performance.now() < end);
          }
        }
        const result = { gathering: await gathering, candidate: await candidate };
        pc.close();
        for (const track of stream.getTracks()) track.stop();
        return result;
      }, variant);
      results.get(variant)!.gathering.push(timing.gathering);
      results.get(variant)!.candidate.push(timing.candidate);
      await page.close();
    }
  }
} finally {
  await browser.close();
  server.close();
}

console.log(`\n${new Date().toISOString().slice(0, 16)}Z, ${runs} runs, Chromium ${version}: ms after setLocalDescription, median (all runs)\n`);
console.log(
  markdownTable(
    ['variant', 'gathering state changed', 'first candidate'],
    variants.map((v) => {
      const { gathering, candidate } = results.get(v)!;
      const all = (values: number[]) => `${fixed(median(values), 0)} (${values.map((x) => fixed(x, 0)).join(', ')})`;
      return [v, all(gathering), all(candidate)];
    }),
  ),
);

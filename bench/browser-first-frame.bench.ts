// Time from the click on Join to the first decoded remote video
// frame, in headless Chromium (test/README.md, "Real browsers on these machines"), against the bare two-page
// WebRTC call of support/bare-webrtc/ measured in the same run. Parley runs as
// `node dist/src/main.js` (npm run build first) on PostgreSQL and on PGlite.
// One browser context per participant; the other participant is already in
// the call and the clicking one's camera preview is running, as it is for a
// person looking at it. The same probe (support/realtime-first-frame-probe.js)
// measures both pages and splits the time into phases.
//   npm run bench:browser -- [--runs=7] [--targets=bare,parley-pg,parley-pglite] [--before=DIR [--before-db=pglite]] [--trace] [--chrome-trace=DIR] [--signaling-delay=MS] [--cpu-slowdown=N]
// --cpu-slowdown: the clicking page's main thread N times slower from just before the click
// (DevTools' CPU throttling; 4 is its "mid-tier mobile"), as on a phone.
// --chrome-trace: a Chromium performance trace (DevTools' format) of each run, click to first frame, saved in DIR.
// --signaling-delay: the pages reach their server through support/delay-proxy.ts,
// every byte MS later each way (a signaling round trip of 2 × MS, as on a real
// network); the media between the pages stays on loopback.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS } from '../test/helpers/browser.js';
import { mainThreadTime } from './support/chrome-trace.js';
import { startDelayProxy, type DelayProxy } from './support/delay-proxy.js';
import { startBenchPostgres, withClient } from './support/postgres.js';
import { freePort, root, startParley, startProcess, type ServerProcess } from './support/processes.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

type TargetName = 'bare' | 'parley-pg' | 'parley-pglite' | 'parley-before';
interface Target {
  name: TargetName;
  server: ServerProcess;
  /** Where the pages reach the server: the server itself, or the delay proxy in front of it. */
  pageUrl: string;
  proxy: DelayProxy | null;
  /** Parley: the Instance API token. */
  token: string;
}

// The page functions below are kept free of inner named functions: tsx would wrap those in a helper the page lacks.
interface ProbeEvent {
  name: string;
  /** Wall clock, milliseconds (both pages run on the same machine). */
  at: number;
  duration?: number;
}
interface ProbeState {
  events: ProbeEvent[];
  clickAt: number | null;
  firstFrameAt: number | null;
}
interface Probe {
  __probe: ProbeState;
}
interface Bare {
  bare?: { ready: boolean; peer: string | null };
}

const options = flags();
const runs = Number(options.get('runs') ?? 7);
const beforeDir = options.get('before');
/** --before-db=pglite: the earlier build runs on PGlite (else on PostgreSQL). */
const beforeDb = options.get('before-db') ?? 'postgres';
/** --trace: print every run's timeline, both pages, from the click to the first frame. */
const trace = options.get('trace') === 'true';
const chromeTraceDir = options.get('chrome-trace');
const signalingDelay = Number(options.get('signaling-delay') ?? 0);
/** --cpu-slowdown=N: the clicking page's main thread N times slower (1: as the machine is). */
const cpuSlowdown = Number(options.get('cpu-slowdown') ?? 1);
if (chromeTraceDir) fs.mkdirSync(chromeTraceDir, { recursive: true });
const names = (options.get('targets') ?? 'bare,parley-pg,parley-pglite').split(',') as TargetName[];
if (beforeDir) names.push('parley-before');
const log = (line: string) => process.stderr.write(line + '\n');
const probe = fs.readFileSync(path.join(root, 'bench/support/realtime-first-frame-probe.js'), 'utf8');
/**
 * The steps the probe logs, in the order they happen in a call: the clicking
 * page's (the newcomer, which makes the offer), the other page's ("other:"),
 * and the server's log line written just after it sends `joined`.
 */
const PHASES = [
  'ws-created', 'ws-open', 'join-sent', 'server:joined-logged', 'joined', 'pc-created', 'negotiationneeded', 'offer-sent', 'other:offer-received', 'other:answer-sent',
  'answer-received', 'ice-connected', 'other:ice-connected', 'connected', 'track', 'first-frame',
];

/** From the Chromium trace (--chrome-trace): the newcomer's main thread, click to first frame. */
const MAIN_THREAD = ['main:busy', 'main:longestTask', 'main:script', 'main:style', 'main:layout', 'main:paint', 'main:webrtc'];

async function participant(browser: Browser, contexts: BrowserContext[]): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1024, height: 720 } });
  contexts.push(context);
  await context.addInitScript({ content: probe });
  return context.newPage();
}

/** Puts the host in the call and the guest on the join screen; returns the guest's page, ready to click. */
async function prepareParley(target: Target, browser: Browser, contexts: BrowserContext[]): Promise<{ page: Page; other: Page; start: string }> {
  const response = await fetch(`${target.server.url}/api/rooms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Consultation', meeting_duration: 30, scheduled_at: new Date().toISOString() }),
  });
  if (response.status !== 201) throw new Error(`creating a room: ${response.status} ${await response.text()}`);
  // Its join URLs carry PUBLIC_URL: the delay proxy's, when there is one.
  const room = (await response.json()) as { host_join_url: string; guest_join_url: string };
  const host = await participant(browser, contexts);
  await host.goto(`${room.host_join_url}?name=Host`);
  await host.getByTestId('join-button').click();
  await host.getByTestId('leave-button').waitFor();
  const guest = await participant(browser, contexts);
  await guest.goto(`${room.guest_join_url}?name=Guest`);
  await guest.waitForFunction(() => (document.querySelector('[data-testid=local-video]') as HTMLVideoElement | null)?.videoWidth, null, { timeout: 15_000 });
  return { page: guest, other: host, start: '[data-testid=join-button]' };
}

async function prepareBare(target: Target, browser: Browser, contexts: BrowserContext[], run: number): Promise<{ page: Page; other: Page; start: string }> {
  const url = `${target.pageUrl}/?room=run-${run}`;
  const host = await participant(browser, contexts);
  await host.goto(url);
  await host.waitForFunction(() => (window as unknown as Bare).bare?.ready, null, { timeout: 15_000 });
  const guest = await participant(browser, contexts);
  await guest.goto(url);
  await guest.waitForFunction(
    () => (window as unknown as Bare).bare?.peer && (document.getElementById('local') as HTMLVideoElement).videoWidth > 0,
    null,
    { timeout: 15_000 },
  );
  return { page: guest, other: host, start: '#start' };
}

/**
 * One call: milliseconds from the click to each phase (the first time it
 * happens after the click), `first-frame` last, and the main threads' long
 * tasks in that time (`longtasks`, `other:longtasks`).
 */
async function measure(target: Target, browser: Browser, run: number): Promise<Record<string, number>> {
  const contexts: BrowserContext[] = [];
  try {
    const { page, other, start } = target.name === 'bare' ? await prepareBare(target, browser, contexts, run) : await prepareParley(target, browser, contexts);
    // Both pages settle (device lists, meters) before the click, as they have for a person looking at the preview.
    await sleep(500);
    if (cpuSlowdown > 1) await (await page.context().newCDPSession(page)).send('Emulation.setCPUThrottlingRate', { rate: cpuSlowdown });
    if (chromeTraceDir) await browser.startTracing(page, { categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'v8.execute', 'blink', 'media', 'webrtc'] });
    await page.click(start);
    await page.waitForFunction(() => (window as unknown as Probe).__probe.firstFrameAt !== null, null, { timeout: 30_000, polling: 50 });
    const chromeTrace = chromeTraceDir ? (await browser.stopTracing()).toString() : null;
    if (chromeTrace) fs.writeFileSync(path.join(chromeTraceDir!, `${target.name}-${run}.json`), chromeTrace);
    const read = () => ({ ...(window as unknown as Probe).__probe });
    const [self, peer] = [await page.evaluate(read), await other.evaluate(read)];
    const clickAt = self.clickAt!;
    const phases: Record<string, number> = {};
    const main = chromeTrace ? mainThreadTime(chromeTrace, self.firstFrameAt! - clickAt) : null;
    if (main) for (const [name, ms] of Object.entries(main)) phases[`main:${name}`] = ms;
    const collect = (state: ProbeState, prefix: string) => {
      let longtasks = 0;
      for (const event of state.events) {
        if (event.at < clickAt || event.at > self.firstFrameAt!) continue;
        if (event.name === 'longtask') longtasks += event.duration ?? 0;
        else phases[prefix + event.name] ??= event.at - clickAt;
      }
      phases[`${prefix}longtasks`] = longtasks;
    };
    collect(self, '');
    collect(peer, 'other:');
    if (trace) {
      const timeline = [...self.events.map((e) => ({ ...e, page: 'self ' })), ...peer.events.map((e) => ({ ...e, page: 'other' }))]
        .filter((e) => e.at >= clickAt && e.at <= self.firstFrameAt!)
        .sort((a, b) => a.at - b.at);
      log(timeline.map((e) => `  ${fixed(e.at - clickAt, 1).padStart(7)} ${e.page} ${e.name}${e.duration ? ` ${fixed(e.duration, 0)} ms` : ''}`).join('\n'));
    }
    phases['first-frame'] = self.firstFrameAt! - clickAt;
    // Parley logs "participant joined" right after it sends `joined` (pino's time: wall clock, ms).
    if (target.name !== 'bare') {
      const logged = target.server
        .output()
        .split('\n')
        .filter((line) => line.includes('"participant joined"'))
        .map((line) => (JSON.parse(line) as { time: number }).time)
        .find((time) => time >= Math.floor(clickAt));
      if (logged !== undefined) phases['server:joined-logged'] = logged - clickAt;
    }
    return phases;
  } finally {
    await Promise.all(contexts.map((c) => c.close()));
  }
}

log(`browser: ${runs} runs per target, targets ${names.join(', ')}`);
const needsPostgres = names.some((n) => n === 'parley-pg' || (n === 'parley-before' && beforeDb !== 'pglite'));
const postgres = needsPostgres ? await startBenchPostgres({ durable: false, log }) : null;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-browser-'));
const targets: Target[] = [];
let browser: Browser | null = null;
try {
  for (const name of names) {
    const proxy = signalingDelay > 0 ? await startDelayProxy(signalingDelay) : null;
    if (name === 'bare') {
      const port = await freePort();
      const server = await startProcess({
        name: 'bare-webrtc',
        args: ['--import', 'tsx', path.join(root, 'bench/support/bare-webrtc/server.ts')],
        env: { PORT: String(port) },
        port,
        readyPath: '/healthz',
      });
      proxy?.setTarget(port);
      targets.push({ name, server, pageUrl: proxy?.url ?? server.url, proxy, token: '' });
      continue;
    }
    let env: Record<string, string>;
    if (name === 'parley-pglite') {
      env = { DATA_DIR: dataDir };
    } else if (name === 'parley-pg') {
      env = { DATABASE_URL: postgres!.url };
    } else if (beforeDb === 'pglite') {
      env = { DATA_DIR: fs.mkdtempSync(path.join(dataDir, 'before-')) };
    } else {
      await withClient(postgres!.url, (client) => client.query('create database parley_browser_before'));
      env = { DATABASE_URL: postgres!.url.replace(/\/postgres$/, '/parley_browser_before') };
    }
    if (proxy) env.PUBLIC_URL = proxy.url;
    const server = await startParley(env, name === 'parley-before' ? path.resolve(beforeDir!, 'dist/src/main.js') : undefined);
    proxy?.setTarget(Number(new URL(server.url).port));
    targets.push({ name, server, pageUrl: proxy?.url ?? server.url, proxy, token: server.instanceToken });
  }
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });

  log('warm-up');
  for (const target of targets) await measure(target, browser, -1);

  const samples = new Map<TargetName, Record<string, number>[]>();
  for (let run = 0; run < runs; run++) {
    // Each run starts with a different target, so that no target always follows the same one.
    const order = targets.map((_, i) => targets[(i + run) % targets.length]!);
    for (const target of order) {
      const marks = await measure(target, browser, run);
      samples.set(target.name, [...(samples.get(target.name) ?? []), marks]);
      log(`run ${run + 1} ${target.name.padEnd(13)} first frame after ${fixed(marks['first-frame']!, 0)} ms  ` +
        [...PHASES, 'longtasks', 'other:longtasks', ...MAIN_THREAD].filter((p) => p in marks && p !== 'first-frame').map((p) => `${p} ${fixed(marks[p]!, 0)}`).join(', '));
    }
  }

  const reference = targets[0]!.name;
  const firstFrame = (name: TargetName) => samples.get(name)!.map((m) => m['first-frame']!);
  const refMedian = median(firstFrame(reference));
  console.log(`\n### Browser: Join to first decoded remote frame\n`);
  console.log(`${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores, Node ${process.version}, ${browser.version()}, ${runs} runs per target (medians), loopback${signalingDelay ? `, the pages ${signalingDelay} ms from their server each way (--signaling-delay)` : ''}${cpuSlowdown > 1 ? `, the clicking page's main thread ${cpuSlowdown}× slower (--cpu-slowdown)` : ''}\n`);
  console.log(markdownTable(
    ['server', 'median ms', `÷ ${reference}`, 'runs (ms, sorted)'],
    targets.map((t) => {
      const values = firstFrame(t.name);
      return [t.name, fixed(median(values), 0), fixed(median(values) / refMedian, 2), [...values].sort((a, b) => a - b).map((v) => fixed(v, 0)).join(', ')];
    }),
  ));
  console.log('\nPhases: median ms after the click (the newcomer\'s page; "other:" the page already in the call), – where a step happened before the click; longtasks: main-thread tasks over 50 ms, total ms' +
    (chromeTraceDir ? '; main:*: the newcomer\'s main thread from the click to the first frame, from the Chromium trace (support/chrome-trace.ts), ms' : '') + ':\n');
  const rows = [...PHASES, 'longtasks', 'other:longtasks', ...(chromeTraceDir ? MAIN_THREAD : [])].map((phase) => [
    phase,
    ...targets.map((t) => {
      const all = samples.get(t.name)!;
      return all.every((m) => phase in m) ? fixed(median(all.map((m) => m[phase]!)), 0) : '–';
    }),
  ]);
  console.log(markdownTable(['phase', ...targets.map((t) => t.name)], rows));
} finally {
  await browser?.close();
  for (const target of targets) {
    await target.server.stop().catch(() => {});
    await target.proxy?.close();
  }
  await postgres?.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

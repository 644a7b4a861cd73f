// Faults of group calls through Janus (docs/design.md, "Group calls through an
// SFU", Faults), measured over many runs in headless Chromium:
//   - kill, freeze, hang: a call of three through a Janus supervised as a
//     local one (src/local-janus.ts), which is killed with -9 or frozen with
//     SIGSTOP (its supervision sees it stopped in /proc and kills it); `hang`
//     freezes it with that look turned off, as a hang the kernel does not show
//     (killed once 2.5 s pass without an answer). The ms from the fault until
//     every page decodes every other picture again (test/helpers/sfu.ts
//     mediaBackAfter), and each step on the way: the supervision's kill, the
//     new Janus spawned and answering, the pages told `sfu-restart`, their
//     publication answered, their subscription's offer.
//   - change: a call of three, the guest's Chromium in a network namespace of
//     its own (test/helpers/netns.ts) whose address changes; the ms until
//     every page decodes every picture again. Needs root, iproute2, nftables.
//   - capacity: people join a call through Janus one by one; with each, the
//     median over the pages of the frames a second each remote picture
//     decodes (getStats), and the CPU of Parley's process and Janus's
//     (/proc) per person, until that median falls under 15 fps.
// Parley runs in process (the faults, on a relay of test/helpers/browser.ts;
// the change, on the namespace's address), and from dist/ for the capacity
// (npm run build first), whose CPU is its process's.
//   npm run bench:sfu-recovery -- [--runs=10] [--only=kill,freeze,hang,change,capacity] [--max-people=12] [--window=5000] [--verbose]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import pino from 'pino';
import { CHROMIUM_ARGS, join, keepPeerConnections, startWorld, type BrowserWorld } from '../test/helpers/browser.js';
import { startTestJanus } from '../test/helpers/janus.js';
import { joinCall, startNetworkWorld } from '../test/helpers/netns-world.js';
import { cleanupStale, createGuestNetwork, networkUnavailable } from '../test/helpers/netns.js';
import { everyoneSees, mediaBackAfter, movedToSfu } from '../test/helpers/sfu.js';
import { loadConfig } from '../src/config.js';
import { HEALTHY_AFTER_MS, startLocalJanus, type LocalJanus } from '../src/local-janus.js';
import { startParley, type ServerProcess } from './support/processes.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

const options = flags();
const runs = Number(options.get('runs') ?? 10);
const only = (options.get('only') ?? 'kill,freeze,change,capacity').split(',');
const maxPeople = Number(options.get('max-people') ?? 12);
const windowMs = Number(options.get('window') ?? 5000);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds used so far by a process (utime + stime from /proc, USER_HZ 100), 0 once it is gone. */
function cpuSeconds(pid: number): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** --verbose: each page's SFU messages, stamped (ms within the last 100 s). */
const timelines = new Map<Page, string[]>();

const summary = (values: number[]) => (values.length ? { median: median(values), min: Math.min(...values), max: Math.max(...values) } : null);

async function roomOf(server: ServerProcess & { instanceToken: string }): Promise<Record<string, string>> {
  const response = await fetch(`${server.url}/api/rooms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.instanceToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench', meeting_duration: 60, scheduled_at: new Date().toISOString() }),
  });
  return (await response.json()) as Record<string, string>;
}

async function person(browser: Browser, contexts: BrowserContext[], url: string, name: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
  await context.addInitScript(keepPeerConnections);
  contexts.push(context);
  const page = await context.newPage();
  watch(page);
  await page.goto(url);
  await page.getByTestId('name-input').fill(name);
  await page.getByTestId('join-button').click();
  await page.getByTestId('leave-button').waitFor({ timeout: 60_000 });
  return page;
}

/** --verbose: the page's SFU signaling, stamped: where a slow recovery spends its time. */
function watch(page: Page): void {
  if (options.has('verbose')) {
    const seen: string[] = [];
    timelines.set(page, seen);
    const stamp = (dir: string, payload: string | Buffer) => {
      const message = JSON.parse(String(payload)) as { type: string; code?: string; sdp?: string | null };
      if (message.type.startsWith('sfu') || message.type === 'error') seen.push(`${Date.now() % 100_000} ${dir}${message.type}${message.code ? `:${message.code}` : ''}${message.sdp === null ? ':empty' : ''}`);
    };
    page.on('websocket', (socket) => {
      socket.on('framesent', ({ payload }) => stamp('>', payload));
      socket.on('framereceived', ({ payload }) => stamp('<', payload));
    });
  }
}

type Fault = 'kill' | 'freeze' | 'hang';
type Stamp = { at: number; what: string };

/** The page's SFU messages, stamped (all pages of a fault run): when the pages heard `sfu-restart`, got their answers and offers. */
const received = new Map<Page, Stamp[]>();
function stampReceived(page: Page): void {
  const seen: Stamp[] = [];
  received.set(page, seen);
  page.on('websocket', (socket) => socket.on('framereceived', ({ payload }) => seen.push({ at: Date.now(), what: (JSON.parse(String(payload)) as { type: string }).type })));
}

/** A local Janus whose supervision's log lines are stamped (killed, exited, spawned, answering). */
let nextPorts = 52_000 + (process.pid % 20) * 200;
async function stampedJanus(watchStopped: boolean): Promise<{ janus: LocalJanus; log: Stamp[] }> {
  const log: Stamp[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void log.push({ at: Date.now(), what: (JSON.parse(line) as { msg: string }).msg }) });
  const config = loadConfig({ SFU: 'janus', JANUS_API_SECRET: 'bench-janus-secret', JANUS_RTP_PORTS: `${nextPorts}-${nextPorts + 99}`, LOG_LEVEL: 'silent' });
  nextPorts += 100;
  return { janus: await startLocalJanus(config, logger, { watchStopped }), log };
}

/** Where a run's time went: ms from the fault to each step (the last page for the pages' steps). */
const STEPS = ['killed', 'exited', 'spawned', 'answering', 'pages told sfu-restart', 'publications answered', 'last subscription offer', 'media back'] as const;
function stepsOf(at: number, back: number, log: Stamp[], pages: Page[]): Record<string, number> {
  const after = (stamps: Stamp[], what: string, last = false) => {
    const found = stamps.filter((stamp) => stamp.at >= at && stamp.at <= at + back && stamp.what.startsWith(what));
    return (last ? found.at(-1) : found[0])?.at;
  };
  const ms = (when: number | undefined) => (when === undefined ? NaN : when - at);
  const slowest = (what: string, last = false) => Math.max(...pages.map((page) => ms(after(received.get(page)!, what, last))));
  return {
    killed: ms(after(log, 'local janus stopped answering')),
    exited: ms(after(log, 'local janus exited')),
    spawned: ms(after(log, 'local janus spawned')),
    answering: ms(after(log, 'local janus answering')),
    'pages told sfu-restart': slowest('sfu-restart'),
    'publications answered': slowest('sfu-answer'),
    'last subscription offer': slowest('sfu-offer', true),
    'media back': back,
  };
}

/** Janus killed, frozen or hung `runs` times in one call of three: media back in ms from the fault, and each step's time. */
async function janusFaults(world: BrowserWorld, janus: LocalJanus, log: Stamp[], fault: Fault) {
  const room = await world.createRoom();
  const back: number[] = [];
  const steps: Record<string, number>[] = [];
  try {
    const pages: Page[] = [];
    for (const [i, name] of ['Host', 'Pat', 'Relative'].entries()) {
      const page = await world.participant({ viewport: { width: 800, height: 600 } });
      watch(page);
      stampReceived(page);
      await join(page, i === 0 ? room.host_join_url : room.guest_join_url, name);
      pages.push(page);
    }
    await everyoneSees(pages, 2, 90_000);
    // Faults once the move to Janus is done (make-before-break: until then, pictures come peer to peer too).
    await movedToSfu(pages);
    for (let run = 0; run < runs; run++) {
      // Each fault hits a Janus that has served for longer than HEALTHY_AFTER_MS: a first failure, restarted at once.
      // (2 s after media back made kills ~3 s apart, which the supervision rightly counted as failures in a row.)
      await sleep(HEALTHY_AFTER_MS + 1000);
      const pid = janus.pid!;
      const at = Date.now();
      process.kill(pid, fault === 'kill' ? 'SIGKILL' : 'SIGSTOP');
      const upAt = (async () => {
        while (janus.pid === pid) await sleep(20);
        await janus.whenUp();
      })();
      try {
        back.push(await mediaBackAfter(pages, 2, at, 60_000));
        await upAt;
        steps.push(stepsOf(at, back.at(-1)!, log, pages));
        console.error(`${fault} ${run + 1} (load ${fixed(os.loadavg()[0]!)}): ${Object.entries(steps.at(-1)!).map(([step, ms]) => `${step} ${ms}`).join(', ')}`);
        if (options.has('verbose')) for (const [i, page] of pages.entries()) console.error(`  page ${i} (fault at ${at % 100_000}): ${timelines.get(page)!.splice(0).filter((line) => !line.includes('candidate') && !line.includes('layer')).join(', ')}`);
      } catch (error) {
        console.error(`${fault} ${run + 1}: ${(error as Error).message}`);
        await upAt;
        await everyoneSees(pages, 2, 60_000);
      }
    }
  } finally {
    await world.closeContexts();
  }
  return { back, steps };
}

/** Each step's median over the runs, in ms from the fault. */
const stepMedians = (steps: Record<string, number>[]) => STEPS.map((step) => fixed(median(steps.map((run) => run[step]!).filter(Number.isFinite)), 0));

/** The guest's address changed `runs` times in a call of three through Janus (two beside the server, the guest in its namespace). */
async function addressChanges(): Promise<number[]> {
  const reason = networkUnavailable();
  if (reason) {
    console.error(`change: skipped (${reason})`);
    return [];
  }
  cleanupStale();
  const network = createGuestNetwork();
  // Janus gathers on the address both namespaces reach: the root side of the guest's link.
  const janus = await startTestJanus({ interfaces: [network.hostAddress] });
  const world = await startNetworkWorld(network, { SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret });
  const times: number[] = [];
  try {
    const room = await world.createRoom();
    const host = await world.hostPage();
    const relative = await world.hostPage();
    const guest = await world.guestPage();
    for (const page of [host, relative, guest]) watch(page);
    await joinCall(host, room.host_join_url, 'Host');
    await joinCall(relative, room.guest_join_url, 'Relative');
    await joinCall(guest, room.guest_join_url, 'Guest');
    const pages = [host, relative, guest];
    await everyoneSees(pages, 2, 90_000);
    // Faults once the move to Janus is done (make-before-break: until then, pictures come peer to peer too).
    await movedToSfu(pages);
    for (let run = 0; run < runs; run++) {
      await sleep(2000);
      const at = Date.now();
      network.changeAddress();
      try {
        times.push(await mediaBackAfter(pages, 2, at, 60_000));
        console.error(`change ${run + 1}: media back ${times.at(-1)} ms`);
      } catch (error) {
        console.error(`change ${run + 1}: ${(error as Error).message}`);
        await everyoneSees(pages, 2, 60_000).catch(() => undefined);
      } finally {
        if (options.has('verbose')) for (const [i, page] of pages.entries()) console.error(`  page ${i} (change at ${at % 100_000}): ${timelines.get(page)!.splice(0).filter((line) => !line.includes('candidate') && !line.includes('layer')).join(', ')}`);
      }
    }
  } finally {
    await world.close();
    await janus.stop();
    network.destroy();
  }
  return times;
}

/** Remote video frames decoded a second per picture on a page, over `ms` (from getStats: every inbound video stream). */
async function fpsPerPicture(pages: Page[], ms: number): Promise<number[]> {
  const frames = (page: Page) =>
    page.evaluate(async () => {
      const counts: Record<string, number> = {};
      for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
        if (pc.connectionState !== 'connected') continue;
        (await pc.getStats()).forEach((s) => {
          if (s.type === 'inbound-rtp' && s.kind === 'video') counts[`${pc.localDescription?.sdp.length}-${s.id}`] = s.framesDecoded ?? 0;
        });
      }
      return counts;
    });
  const before = await Promise.all(pages.map(frames));
  await sleep(ms);
  const after = await Promise.all(pages.map(frames));
  return after.map((counts, i) => {
    const rates = Object.entries(counts).map(([id, n]) => ((n - (before[i]![id] ?? n)) * 1000) / ms);
    return rates.length ? median(rates) : 0;
  });
}

/** People join one by one until the median page's pictures come under 15 fps (or max-people). */
async function capacity(browser: Browser, janus: LocalJanus, server: ServerProcess & { instanceToken: string }) {
  const room = await roomOf(server);
  const contexts: BrowserContext[] = [];
  const rows: (string | number)[][] = [];
  try {
    const pages: Page[] = [await person(browser, contexts, room.host_join_url!, 'P1')];
    for (let size = 2; size <= maxPeople; size++) {
      pages.push(await person(browser, contexts, room.guest_join_url!, `P${size}`));
      if (size < 3) continue;
      try {
        await everyoneSees(pages, size - 1, 120_000);
      } catch (error) {
        rows.push([size, 'not everyone decoded everyone', '', '', '', '']);
        console.error(`capacity ${size}: ${(error as Error).message}`);
        break;
      }
      await sleep(4000);
      const cpu = { parley: cpuSeconds(server.pid), janus: cpuSeconds(janus.pid!) };
      const fps = await fpsPerPicture(pages, windowMs);
      const used = { parley: (cpuSeconds(server.pid) - cpu.parley) / (windowMs / 1000), janus: (cpuSeconds(janus.pid!) - cpu.janus) / (windowMs / 1000) };
      const load = os.loadavg()[0]!;
      rows.push([size, fixed(median(fps)), fixed(Math.min(...fps)), fixed((used.parley * 100) / size), fixed((used.janus * 100) / size), fixed(load)]);
      console.error(`capacity ${size}: median fps ${fixed(median(fps))} (pages ${fps.map((f) => fixed(f)).join(', ')}), Parley ${fixed(used.parley * 100)} %, Janus ${fixed(used.janus * 100)} % of a core, load ${fixed(load)}`);
      if (median(fps) < 15) break;
    }
  } finally {
    await Promise.all(contexts.map((context) => context.close()));
  }
  return rows;
}

async function main() {
  const out: string[] = [];
  const row = (name: string, values: number[], extra = '') => {
    const s = summary(values);
    return [name, values.length, s ? s.median : '-', s ? `${s.min}–${s.max}` : '-', extra];
  };
  const rows: (string | number)[][] = [];
  const stepRows: (string | number)[][] = [];
  for (const [faults, watchStopped] of [[['kill', 'freeze'], true], [['hang'], false]] as const) {
    if (!faults.some((fault) => only.includes(fault))) continue;
    // Parley in process (test/helpers/browser.ts): a server process's start missed its 60 s at a load average of 70.
    const { janus, log } = await stampedJanus(watchStopped);
    const world = await startWorld({ SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret });
    try {
      for (const fault of faults) {
        if (!only.includes(fault)) continue;
        const { back, steps } = await janusFaults(world, janus, log, fault);
        const name = { kill: 'Janus killed with -9', freeze: 'Janus frozen with SIGSTOP', hang: 'Janus frozen, not looked up in /proc (a hang)' }[fault];
        rows.push(row(name, back, `new Janus answering: median ${fixed(median(steps.map((run) => run.answering!)), 0)} ms`));
        stepRows.push([name, ...stepMedians(steps)]);
      }
    } finally {
      await world.close();
      await janus.stop();
    }
  }
  if (stepRows.length) out.push(markdownTable(['median ms from the fault to', ...STEPS], stepRows));
  if (only.includes('capacity')) {
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
    const janus = await startTestJanus();
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-sfu-recovery-'));
    const server = await startParley({ DATA_DIR: dataDir, LOG_LEVEL: 'warn', SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret });
    try {
      out.push(
        markdownTable(['people', 'received fps per picture (median page)', 'lowest page', 'Parley CPU % of a core per person', 'Janus CPU % of a core per person', 'load average'], await capacity(browser, janus, server)),
      );
    } catch (error) {
      // What Parley logged of the SFU, for a run that failed.
      console.error(server.output().split('\n').filter((line) => /sfu|janus/i.test(line)).slice(-30).join('\n'));
      throw error;
    } finally {
      await server.stop();
      await browser.close();
      await janus.stop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  if (only.includes('change')) rows.push(row('the guest\u2019s address changed', await addressChanges()));
  console.log(markdownTable(['fault (call of three through Janus)', 'runs', 'media back on every page: median (ms)', 'min–max (ms)', ''], rows));
  for (const table of out) console.log(`\n${table}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

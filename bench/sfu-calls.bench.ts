// Group calls, mesh against SFU (docs/design.md, "Group calls through an
// SFU"), in headless Chromium against `node dist/src/main.js` (npm run build
// first) on PGlite: for calls of each size, each page's upload and download
// (kbit/s, median over the pages, from getStats over a window once everyone
// decodes everyone), the last joiner's time from Join to its first decoded
// remote frame, and the CPU of Parley (its processes) and of Janus per
// participant. The mesh runs with SFU=off, the SFU with SFU=janus and a Janus
// started here (test/helpers/janus.ts).
//   npm run bench:sfu -- [--sizes=2,3,4,6] [--window=5000] [--paths=mesh,sfu]
// --first-frame=N instead: N rounds, each a two-person call peer to peer and
// a three-person call through Janus in turn, each last joiner's Join to
// first remote frame, and the median of each step on the way (every page's
// signaling and connections stamped: support/call-timeline.ts). With
// SFU_WARM=true, the third joining once the two pages' SFU path is warm
// (docs/design.md, "Group calls through an SFU", Warm path); --cold:
// SFU_WARM=false. Each last person joins a call settled for --settle ms
// (3000). Each round also measures a two-person join beside another call of
// two: the same load on this machine's two cores as the third person's.
//   npm run bench:sfu -- --first-frame=12 [--cold] [--threshold=4] [--settle=3000]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS, keepPeerConnections } from '../test/helpers/browser.js';
import { startTestJanus } from '../test/helpers/janus.js';
import { everyoneSees, everyoneWarm } from '../test/helpers/sfu.js';
import { stampScript, stampsOf, steps } from './support/call-timeline.js';
import { startParley, type ServerProcess } from './support/processes.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

const options = flags();
const sizes = (options.get('sizes') ?? '2,3,4,6').split(',').map(Number);
const windowMs = Number(options.get('window') ?? 5000);
const paths = (options.get('paths') ?? 'mesh,sfu').split(',') as ('mesh' | 'sfu')[];
const firstFrameRounds = Number(options.get('first-frame') ?? 0);
/** --cold: the SFU path not kept warm (SFU_WARM=false), the third person joining as soon as the two see each other. */
const cold = options.has('cold');
/** --threshold=N: SFU_MIN_PARTICIPANTS (3); --threshold=4 keeps the call of three peer to peer, the floor a mesh sets. */
const threshold = options.get('threshold') ?? '3';
/** --settle=MS: how long a call runs before its last person joins, in --first-frame rounds (3 s by default). */
const SETTLE_MS = Number(options.get('settle') ?? 3000);

/** CPU seconds used so far by a process and its children (utime + stime, from /proc). */
function cpuSeconds(pid: number): number {
  // USER_HZ: 100 on Linux.
  const ticks = 100;
  const own = (p: number) => {
    try {
      const fields = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return (Number(fields[11]) + Number(fields[12])) / ticks;
    } catch {
      return 0;
    }
  };
  const children = (p: number): number[] => {
    try {
      return fs
        .readdirSync(`/proc/${p}/task`)
        .flatMap((task) => fs.readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      return [];
    }
  };
  const all = [pid, ...children(pid)];
  return all.reduce((sum, p) => sum + own(p), 0);
}

/** Bytes sent and received so far on the page's open connections (RTP, audio and video). */
const bytes = (page: Page) =>
  page.evaluate(async () => {
    let sent = 0;
    let received = 0;
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState !== 'connected') continue;
      (await pc.getStats()).forEach((s) => {
        if (s.type === 'outbound-rtp') sent += s.bytesSent ?? 0;
        if (s.type === 'inbound-rtp') received += s.bytesReceived ?? 0;
      });
    }
    return { sent, received };
  });

type BenchServer = ServerProcess & { instanceToken: string };

/** A room on `server`, created through the API with its instance token. */
async function createRoom(server: BenchServer, name: string): Promise<{ host_join_url: string; guest_join_url: string }> {
  const response = await fetch(`${server.url}/api/rooms`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.instanceToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, meeting_duration: 30, scheduled_at: new Date().toISOString() }),
  });
  return response.json();
}

async function measure(server: BenchServer, browser: Browser, size: number, janusPid: number | null, firstFrameOnly = false, warmFirst = false) {
  const room = await createRoom(server, 'Bench');
  const contexts: BrowserContext[] = [];
  const pages: Page[] = [];
  let firstFrameMs = 0;
  let clicked = 0;
  try {
    for (let i = 0; i < size; i++) {
      const context = await browser.newContext({ viewport: { width: 800, height: 600 } });
      await context.addInitScript(keepPeerConnections);
      if (firstFrameOnly) await context.addInitScript(stampScript());
      contexts.push(context);
      const page = await context.newPage();
      pages.push(page);
      await page.goto(i === 0 ? room.host_join_url : room.guest_join_url);
      await page.getByTestId('name-input').fill(`P${i}`);
      if (i > 0 && i === size - 1) {
        await everyoneSees(pages.slice(0, -1), size - 2, 90_000);
        // The last person comes to a call settled as it is some seconds in (its connections' setup over, the
        // encoders ramped up), not in the middle of its start: SETTLE_MS, and warm, once the SFU path is warm
        // (docs/design.md, "Group calls through an SFU", Warm path; WARM_AFTER_MS is less than SETTLE_MS).
        if (firstFrameOnly) await sleep(SETTLE_MS);
        if (warmFirst) await everyoneWarm(pages.slice(0, -1), 30_000);
      }
      clicked = Date.now();
      await page.getByTestId('join-button').click();
      if (i === size - 1) {
        await page.waitForFunction(() => [...document.querySelectorAll<HTMLVideoElement>('[data-testid="remote-video"]')].some((v) => v.videoWidth > 0), undefined, { timeout: 60_000 });
        firstFrameMs = Date.now() - clicked;
      } else {
        await page.getByTestId('leave-button').waitFor();
      }
    }
    await everyoneSees(pages, size - 1, 90_000);
    if (firstFrameOnly) return { firstFrameMs, steps: await Promise.all(pages.map(async (page) => steps(await stampsOf(page), clicked))), upload: NaN, download: NaN, parleyCpu: NaN, janusCpu: NaN };
    await sleep(4000);
    const before = await Promise.all(pages.map(bytes));
    const cpuBefore = { parley: cpuSeconds(server.pid), janus: janusPid ? cpuSeconds(janusPid) : 0 };
    await sleep(windowMs);
    const after = await Promise.all(pages.map(bytes));
    const cpu = {
      parley: (cpuSeconds(server.pid) - cpuBefore.parley) / (windowMs / 1000),
      janus: janusPid ? (cpuSeconds(janusPid) - cpuBefore.janus) / (windowMs / 1000) : 0,
    };
    const kbits = (n: number) => (n * 8) / windowMs;
    return {
      upload: median(after.map((a, i) => kbits(a.sent - before[i]!.sent))),
      download: median(after.map((a, i) => kbits(a.received - before[i]!.received))),
      firstFrameMs,
      steps: [],
      parleyCpu: (cpu.parley * 100) / size,
      janusCpu: (cpu.janus * 100) / size,
    };
  } finally {
    await Promise.all(contexts.map((context) => context.close()));
  }
}

/** The newcomer's and the others' steps: the median over the rounds of each step's ms after the newcomer's Join. */
function stepTable(label: string, rounds: Map<string, number>[]): string {
  const names = [...new Set(rounds.flatMap((round) => [...round.keys()]))];
  const rows = names
    .map((name) => {
      const values = rounds.map((round) => round.get(name)).filter((v): v is number => v !== undefined);
      return { name, at: median(values), seen: values.length };
    })
    .sort((a, b) => a.at - b.at)
    .map(({ name, at, seen }) => [name, fixed(at, 0), `${seen}/${rounds.length}`]);
  return `${label}\n\n${markdownTable(['step', 'median ms after the newcomer pressed Join', 'rounds with it'], rows)}`;
}

/**
 * A call of two on `server` (a room of its own), started and left running: the load two people in a call put on
 * this machine's two cores, beside which a two-person join is measured again. Returns what stops it.
 */
async function callBeside(server: BenchServer, browser: Browser): Promise<() => Promise<void>> {
  const room = await createRoom(server, 'Beside');
  const contexts = await Promise.all([0, 1].map(() => browser.newContext({ viewport: { width: 800, height: 600 } })));
  const stop = async () => void (await Promise.all(contexts.map((context) => context.close())));
  try {
    const pages = await Promise.all(contexts.map((context) => context.newPage()));
    for (const [i, page] of pages.entries()) {
      await page.goto(i === 0 ? room.host_join_url : room.guest_join_url);
      await page.getByTestId('name-input').fill(`B${i}`);
      await page.getByTestId('join-button').click();
    }
    await everyoneSees(pages, 1, 90_000);
    await sleep(SETTLE_MS);
    return stop;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** --first-frame=N: two people peer to peer and three through Janus in turn, the last joiner's first frame and its steps. */
async function firstFrames(browser: Browser, janus: { url: string; apiSecret: string }) {
  const dirs = [fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-sfu-')), fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-sfu-'))];
  const mesh = await startParley({ DATA_DIR: dirs[0]!, LOG_LEVEL: 'warn', SFU: 'off' });
  const sfu = await startParley({ DATA_DIR: dirs[1]!, LOG_LEVEL: 'warn', SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret, SFU_WARM: String(!cold), SFU_MIN_PARTICIPANTS: threshold });
  const times = { two: [] as number[], twoBeside: [] as number[], three: [] as number[] };
  const newcomer: Map<string, number>[] = [];
  const earlier: Map<string, number>[] = [];
  const failed: string[] = [];
  try {
    for (let round = 0; round < firstFrameRounds; round++) {
      // A round whose call did not settle is told and left out (the upload table's run stops at one).
      let two, twoBeside, three;
      try {
        two = await measure(mesh, browser, 2, null, true);
        const stopBeside = await callBeside(mesh, browser);
        twoBeside = await measure(mesh, browser, 2, null, true).finally(stopBeside);
        three = await measure(sfu, browser, 3, null, true, !cold);
      } catch (error) {
        failed.push(`round ${round + 1}: ${(error as Error).message.split('\n')[0]}`);
        continue;
      }
      times.two.push(two.firstFrameMs);
      times.twoBeside.push(twoBeside.firstFrameMs);
      times.three.push(three.firstFrameMs);
      newcomer.push(three.steps[2]!);
      earlier.push(three.steps[0]!, three.steps[1]!);
      console.error(`round ${round + 1}: two ${two.firstFrameMs} ms, two beside a call ${twoBeside.firstFrameMs} ms, three ${three.firstFrameMs} ms`);
    }
  } finally {
    await Promise.all([mesh.stop(), sfu.stop()]);
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  }
  const [two, twoBeside, three] = [median(times.two), median(times.twoBeside), median(times.three)];
  if (failed.length) console.log(`Rounds left out: ${failed.join('; ')}\n`);
  console.log(`Join to first remote frame, median of ${times.two.length}:`);
  console.log(`- two people peer to peer: ${fixed(two, 0)} ms (${times.two.join(', ')})`);
  console.log(`- two people peer to peer beside another call of two: ${fixed(twoBeside, 0)} ms (${times.twoBeside.join(', ')})`);
  const third = Number(threshold) > 3 ? `the third person, peer to peer (SFU_MIN_PARTICIPANTS=${threshold})` : 'the third person through Janus';
  console.log(`- ${third}: ${fixed(three, 0)} ms (${times.three.join(', ')})`);
  console.log(`- ratio: ${fixed(three / two, 2)}x a two-person join, ${fixed(three / twoBeside, 2)}x one beside a call\n`);
  console.log(stepTable('The third person (newcomer):', newcomer));
  console.log();
  console.log(stepTable('The two already there (both pages pooled):', earlier));
}

async function main() {
  if (firstFrameRounds > 0) {
    const [browser, janus] = await Promise.all([chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS }), startTestJanus()]);
    try {
      return await firstFrames(browser, janus);
    } finally {
      await browser.close();
      await janus.stop();
    }
  }
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  const janus = paths.includes('sfu') ? await startTestJanus() : null;
  const rows: (string | number)[][] = [];
  try {
    for (const mediaPath of paths) {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-sfu-'));
      const env: Record<string, string> = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...(mediaPath === 'sfu' && janus ? { SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret } : { SFU: 'off' }) };
      const server = await startParley(env);
      try {
        for (const size of sizes) {
          if (mediaPath === 'mesh' && size > 8) continue;
          const figures = await measure(server, browser, size, mediaPath === 'sfu' ? (janus?.pid ?? null) : null);
          rows.push([mediaPath, size, fixed(figures.upload, 0), fixed(figures.download, 0), figures.firstFrameMs, fixed(figures.parleyCpu), fixed(figures.janusCpu)]);
          console.error(`${mediaPath} ${size}: ${JSON.stringify(figures)}`);
        }
      } finally {
        await server.stop();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    }
  } finally {
    await browser.close();
    await janus?.stop();
  }
  console.log(
    markdownTable(['path', 'people', 'upload kbit/s (median page)', 'download kbit/s (median page)', 'last joiner: Join to first remote frame (ms)', 'Parley CPU % of a core per person', 'Janus CPU % of a core per person'], rows),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

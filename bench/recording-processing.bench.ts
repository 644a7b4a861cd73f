// What making a recording's file costs (docs/design.md, "Recording with
// consent"): for each number of publishers and each length, headless
// Chromium pages publish their fake camera and microphone to a VideoRoom of a
// Janus started here (test/helpers/page-publisher.ts), Janus records each for
// that long, the pages leave, and composeRecording makes the WebM. Per minute
// recorded: the processing's wall time, the CPU of its programs (janus-pp-rec,
// ffmpeg, ffprobe: the children this process waited for, from /proc/self/stat),
// the raw files' size and the output's.
//   npm run bench:recording -- [--publishers=2,4] [--seconds=30,60] [--fps=15]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestJanus } from '../test/helpers/janus.js';
import { startPublishingBrowser } from '../test/helpers/page-publisher.js';
import { openJanusSession } from '../src/sfu/janus-client.js';
import { composeRecording } from '../src/sfu/recording/compose.js';
import { createVideoRoom, joinAsPublisher, type Publisher } from '../src/sfu/video-room.js';
import { fixed, flags, markdownTable } from './support/stats.js';

const options = flags();
const publisherCounts = (options.get('publishers') ?? '2,4').split(',').map(Number);
const lengths = (options.get('seconds') ?? '30,60').split(',').map(Number);
const fps = Number(options.get('fps') ?? 15);

/** CPU seconds of this process's children that have exited and been waited for (cutime + cstime; USER_HZ 100). */
function childrenCpuSeconds(): number {
  const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const megabytes = (folder: string) => fs.readdirSync(folder).reduce((n, name) => n + fs.statSync(path.join(folder, name)).size, 0) / 1e6;
const until = async (check: () => Promise<boolean>, what: string, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-recording-'));
const janus = await startTestJanus();
const browser = await startPublishingBrowser();
const session = await openJanusSession(janus.url, janus.apiSecret);
const rows: (string | number)[][] = [];
try {
  for (const count of publisherCounts) {
    for (const seconds of lengths) {
      const ref = { janusRoom: 1 + Math.floor(Math.random() * 2 ** 40), secret: `bench-${Math.random()}` };
      await createVideoRoom(session, ref, count);
      const publishers: Publisher[] = [];
      for (let i = 0; i < count; i++) {
        const publisher = await joinAsPublisher(session, ref, `peer-${i}`, () => {});
        publishers.push(publisher);
        const page = await browser.publish(publisher);
        await until(() => browser.sending(page), `peer-${i} sending`);
      }
      const rawDir = path.join(work, `${count}x${seconds}`);
      const started = Date.now();
      await Promise.all(publishers.map((p, i) => p.record(true, path.join(rawDir, `peer-${i}-camera`))));
      // The recording's length is what is measured: it runs for that long.
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      await Promise.all(publishers.map((p) => p.record(false)));
      const recordedMinutes = (Date.now() - started) / 60_000;
      await Promise.all(publishers.map((p) => p.leave()));
      for (const context of browser.browser.contexts()) await context.close();

      const outFile = path.join(work, `${count}x${seconds}.webm`);
      const cpuBefore = childrenCpuSeconds();
      const composing = Date.now();
      const made = await composeRecording({ rawDir, outFile, fps });
      const wallSeconds = (Date.now() - composing) / 1000;
      const cpu = childrenCpuSeconds() - cpuBefore;
      const raw = megabytes(rawDir);
      const row = [count, seconds, fixed(made.durationSeconds), fixed(wallSeconds), fixed(wallSeconds / recordedMinutes), fixed(cpu / recordedMinutes), fixed(raw / recordedMinutes, 2), fixed(made.sizeBytes / 1e6 / recordedMinutes, 2), fixed(os.loadavg()[0]!)];
      console.log(`[bench] ${row.join(' | ')}`);
      rows.push(row);
      fs.rmSync(rawDir, { recursive: true, force: true });
      fs.rmSync(outFile, { force: true });
    }
  }
} finally {
  await session.destroy().catch(() => undefined);
  await browser.close();
  await janus.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
console.log(`\nrecording processing, ${fps} fps 1280x720 VP8 (realtime, cpu-used 8) + Opus; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}, ${os.cpus().length} cores\n`);
console.log(
  markdownTable(
    ['publishers', 'recorded (s)', 'file (s)', 'processing (s)', 'processing s per minute', 'CPU s per minute', 'raw MB per minute', 'output MB per minute', 'load average'],
    rows,
  ),
);

// Recording through Janus and the one WebM made of it (docs/design.md,
// "Recording with consent"), with a real Janus the test starts and Chromium
// pages publishing their fake camera and microphone straight to the
// VideoRoom: nothing is written without the room's secret, each publication
// is recorded as asked, and composeRecording's file, read by ffprobe and
// ffmpeg, has one VP8 and one Opus stream, the duration recorded, frames that
// change, a voice, and a tile black until its publisher started.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestJanus } from '../helpers/janus.js';
import { startPublishingBrowser, type PublishingBrowser } from '../helpers/page-publisher.js';
import { eventually } from '../helpers/wait.js';
import type { LocalJanus } from '../../src/local-janus.js';
import { openJanusSession, type JanusSession } from '../../src/sfu/janus-client.js';
import { composeRecording } from '../../src/sfu/recording/compose.js';
import { runTool } from '../../src/sfu/recording/tools.js';
import { createVideoRoom, joinAsPublisher, type Publisher, type VideoRoomRef } from '../../src/sfu/video-room.js';

let janus: LocalJanus;
let session: JanusSession;
let browser: PublishingBrowser;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-recording-'));
const publishers: Publisher[] = [];

beforeAll(async () => {
  [janus, browser] = await Promise.all([startTestJanus(), startPublishingBrowser()]);
  session = await openJanusSession(janus.url, janus.apiSecret);
}, 60_000);

afterAll(async () => {
  await Promise.all(publishers.map((p) => p.leave()));
  await session?.destroy();
  await Promise.all([browser?.close(), janus?.stop()]);
  if (!process.env.KEEP) fs.rmSync(dir, { recursive: true, force: true });
});

async function room(): Promise<VideoRoomRef> {
  const ref = { janusRoom: 1 + Math.floor(Math.random() * 2 ** 40), secret: `secret-${Math.random()}` };
  await createVideoRoom(session, ref, 8);
  return ref;
}

/** A page publishing in the room, its media flowing to Janus. */
async function publishing(ref: VideoRoomRef, display: string): Promise<Publisher> {
  const publisher = await joinAsPublisher(session, ref, display, () => {});
  publishers.push(publisher);
  const page = await browser.publish(publisher);
  await eventually(() => browser.sending(page), 20_000, `${display} sending to Janus`);
  return publisher;
}

const bytesIn = (folder: string) => (fs.existsSync(folder) ? fs.readdirSync(folder).reduce((n, name) => n + fs.statSync(path.join(folder, name)).size, 0) : 0);

/** Waits until `ms` have passed since `since` while the folder keeps growing (the recording is being written). */
async function recordingFor(folder: string, since: number, ms: number): Promise<void> {
  let last = bytesIn(folder);
  await eventually(
    () => {
      const now = bytesIn(folder);
      const grew = now > last;
      last = now;
      return grew && Date.now() - since >= ms;
    },
    ms + 20_000,
    `${folder} written for ${ms} ms`,
  );
}

const ffprobe = async (file: string) =>
  JSON.parse(await runTool('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,width,height:format=duration', '-of', 'json', file], { timeoutMs: 30_000 })) as {
    streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
    format: { duration: string };
  };

/** The mean saturation of a region of the frame at `seconds`: 0 in a black tile, about 120 in the fake camera's green picture. */
async function saturation(file: string, seconds: number, crop: string): Promise<number> {
  const args = ['-hide_banner', '-ss', String(seconds), '-i', file, '-frames:v', '1', '-vf', `crop=${crop},signalstats,metadata=print:key=lavfi.signalstats.SATAVG:file=-`, '-f', 'null', '-'];
  const out = await runTool('ffmpeg', args, { timeoutMs: 30_000 });
  return Number(/SATAVG=([\d.]+)/.exec(out)?.[1] ?? NaN);
}

/** The loudest sample of the file's sound, in dBFS. */
async function peakLevel(file: string): Promise<number> {
  const args = ['-hide_banner', '-i', file, '-map', '0:a', '-af', 'astats=metadata=1:reset=0,ametadata=print:key=lavfi.astats.Overall.Peak_level:file=-', '-f', 'null', '-'];
  const levels = [...(await runTool('ffmpeg', args, { timeoutMs: 30_000 })).matchAll(/Peak_level=(-?[\d.]+|-inf)/g)].map((m) => Number(m[1]));
  return levels.length ? Math.max(...levels) : -Infinity;
}

describe('a recording through Janus', () => {
  it('writes nothing without the room secret; the file of one publisher has its picture and voice for the time recorded', async () => {
    const ref = await room();
    const publisher = await publishing(ref, 'peer-a');
    const rawDir = path.join(dir, 'one');
    // lock_record: a configure that does not carry the room's secret changes nothing.
    await publisher.handle.message({ request: 'configure', record: true, filename: path.join(rawDir, 'stranger') });
    const started = Date.now();
    await publisher.record(true, path.join(rawDir, 'peer-a-camera'));
    await recordingFor(rawDir, started, 4000);
    await publisher.record(false);
    const recorded = (Date.now() - started) / 1000;
    expect(fs.readdirSync(rawDir).sort()).toEqual([expect.stringMatching(/^peer-a-camera\.\d+-audio-0\.mjr$/), expect.stringMatching(/^peer-a-camera\.\d+-video-1\.mjr$/)]);

    const outFile = path.join(dir, 'one.webm');
    const composing = Date.now();
    const made = await composeRecording({ rawDir, outFile });
    console.log(`[recording] one publisher, ${recorded.toFixed(1)} s recorded: composed in ${Date.now() - composing} ms, ${made.durationSeconds.toFixed(2)} s, ${made.sizeBytes} bytes`);
    const probe = await ffprobe(outFile);
    expect(probe.streams.map((s) => `${s.codec_type}:${s.codec_name}`).sort()).toEqual(['audio:opus', 'video:vp8']);
    expect(probe.streams.find((s) => s.codec_type === 'video')).toMatchObject({ width: 1280, height: 720 });
    expect(made.sizeBytes).toBe(fs.statSync(outFile).size);
    // From the first packet to the stop: a little under the time between the two requests.
    expect(made.durationSeconds).toBeGreaterThan(recorded - 1.5);
    expect(made.durationSeconds).toBeLessThan(recorded + 0.5);
    expect(Number(probe.format.duration)).toBeCloseTo(made.durationSeconds, 1);

    // The fake camera's picture moves: its frames differ from one another.
    const hashes = (await runTool('ffmpeg', ['-hide_banner', '-i', outFile, '-map', '0:v', '-f', 'framemd5', '-'], { timeoutMs: 30_000 }))
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.split(',').pop()!.trim());
    expect(hashes.length).toBeGreaterThan(made.durationSeconds * 15 * 0.8);
    expect(new Set(hashes).size).toBeGreaterThan(hashes.length / 2);
    // The fake microphone's beeps are in the mix, and not clipped.
    const peak = await peakLevel(outFile);
    expect(peak).toBeGreaterThan(-30);
    expect(peak).toBeLessThan(0);
  });

  it('places a publisher who started later in a tile of its own, black until then', async () => {
    const ref = await room();
    const [first, second] = await Promise.all([publishing(ref, 'peer-a'), publishing(ref, 'peer-b')]);
    const rawDir = path.join(dir, 'two');
    const started = Date.now();
    await first.record(true, path.join(rawDir, 'peer-a-camera'));
    await recordingFor(rawDir, started, 3000);
    const secondStarted = Date.now();
    await second.record(true, path.join(rawDir, 'peer-b-camera'));
    await recordingFor(rawDir, secondStarted, 3000);
    await Promise.all([first.record(false), second.record(false)]);
    const recorded = (Date.now() - started) / 1000;
    const lateBy = (secondStarted - started) / 1000;

    const outFile = path.join(dir, 'two.webm');
    const made = await composeRecording({ rawDir, outFile });
    console.log(`[recording] two publishers, the second ${lateBy.toFixed(1)} s later, ${recorded.toFixed(1)} s recorded: ${made.durationSeconds.toFixed(2)} s, ${made.sizeBytes} bytes`);
    const probe = await ffprobe(outFile);
    expect(probe.streams.map((s) => `${s.codec_type}:${s.codec_name}`).sort()).toEqual(['audio:opus', 'video:vp8']);
    expect(made.durationSeconds).toBeGreaterThan(recorded - 1.5);
    expect(made.durationSeconds).toBeLessThan(recorded + 0.5);
    // Two tiles side by side: the first publisher's on the left from the start, the second's black until it started.
    const early = lateBy / 2;
    const late = lateBy + (made.durationSeconds - lateBy) / 2;
    const [leftEarly, rightEarly, leftLate, rightLate] = await Promise.all([
      saturation(outFile, early, '640:720:0:0'),
      saturation(outFile, early, '640:720:640:0'),
      saturation(outFile, late, '640:720:0:0'),
      saturation(outFile, late, '640:720:640:0'),
    ]);
    console.log(`[recording] mean saturation at ${early.toFixed(1)} s: ${leftEarly} | ${rightEarly}; at ${late.toFixed(1)} s: ${leftLate} | ${rightLate}`);
    expect(rightEarly).toBeLessThan(5);
    expect(leftEarly).toBeGreaterThan(40);
    expect(leftLate).toBeGreaterThan(40);
    expect(rightLate).toBeGreaterThan(40);
    // Both voices, two people's beeps at once kept under full scale by the limiter.
    expect(await peakLevel(outFile)).toBeLessThan(0);
  });
});

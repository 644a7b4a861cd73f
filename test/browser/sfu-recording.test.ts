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
async function publishing(ref: VideoRoomRef, display: string, options: { screen?: boolean } = {}): Promise<Publisher> {
  const publisher = await joinAsPublisher(session, ref, display, () => {});
  publishers.push(publisher);
  const page = await browser.publish(publisher, options);
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

/** A region of the frame at `seconds`: its mean saturation (0 in a black tile, about 120 in the fake camera's green) and its brightest luma (16 is black). */
async function region(file: string, seconds: number, crop: string): Promise<{ saturation: number; brightest: number }> {
  const args = ['-hide_banner', '-ss', String(seconds), '-i', file, '-frames:v', '1', '-vf', `crop=${crop},signalstats,metadata=print:file=-`, '-f', 'null', '-'];
  const out = await runTool('ffmpeg', args, { timeoutMs: 30_000 });
  const read = (key: string) => Number(new RegExp(`${key}=([\\d.]+)`).exec(out)?.[1] ?? NaN);
  return { saturation: read('SATAVG'), brightest: read('YMAX') };
}

/** The loudest sample of the file's sound, in dBFS. */
async function peakLevel(file: string): Promise<number> {
  const args = ['-hide_banner', '-i', file, '-map', '0:a', '-af', 'astats=metadata=1:reset=0,ametadata=print:key=lavfi.astats.Overall.Peak_level:file=-', '-f', 'null', '-'];
  // Cumulative (reset=0): the last report is the whole file's; a silent start reads -inf.
  const levels = [...(await runTool('ffmpeg', args, { timeoutMs: 30_000 })).matchAll(/Peak_level=(\S+)/g)].map((m) => (m[1] === '-inf' ? -Infinity : Number(m[1])));
  return levels.at(-1) ?? -Infinity;
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
    // From the first packet to the stop: about the time between the two requests (the files follow the packets'
    // timestamps, which a browser short of CPU sends late at first: 6.3 s of media in 6.1 s at load 30).
    expect(made.durationSeconds).toBeGreaterThan(recorded - 1.5);
    expect(made.durationSeconds).toBeLessThan(recorded + 1.5);
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

  it('places a publisher who started later in a tile of its own, black until then, and a screen share in another', async () => {
    const ref = await room();
    const [first, screen, second] = await Promise.all([publishing(ref, 'peer-a'), publishing(ref, 'peer-a/screen', { screen: true }), publishing(ref, 'peer-b')]);
    const rawDir = path.join(dir, 'two');
    const started = Date.now();
    await Promise.all([first.record(true, path.join(rawDir, 'peer-a-camera')), screen.record(true, path.join(rawDir, 'peer-a-screen'))]);
    await recordingFor(rawDir, started, 3000);
    const secondStarted = Date.now();
    await second.record(true, path.join(rawDir, 'peer-b-camera'));
    await recordingFor(rawDir, secondStarted, 3000);
    await Promise.all([first.record(false), screen.record(false), second.record(false)]);
    const recorded = (Date.now() - started) / 1000;
    const lateBy = (secondStarted - started) / 1000;
    expect(fs.readdirSync(rawDir).filter((name) => name.startsWith('peer-a-screen.'))).toEqual([expect.stringMatching(/^peer-a-screen\.\d+-video-0\.mjr$/)]);

    const outFile = path.join(dir, 'two.webm');
    const made = await composeRecording({ rawDir, outFile });
    console.log(`[recording] a camera and a screen, another camera ${lateBy.toFixed(1)} s later, ${recorded.toFixed(1)} s recorded: ${made.durationSeconds.toFixed(2)} s, ${made.sizeBytes} bytes`);
    const probe = await ffprobe(outFile);
    expect(probe.streams.map((s) => `${s.codec_type}:${s.codec_name}`).sort()).toEqual(['audio:opus', 'video:vp8']);
    expect(made.durationSeconds).toBeGreaterThan(recorded - 1.5);
    expect(made.durationSeconds).toBeLessThan(recorded + 1.5);
    // Three tiles as 2x2, the last row centred: peer-a's camera and screen on top (in the order they started,
    // a few ms apart), peer-b's camera below, black until it started.
    const early = lateBy / 2;
    const late = lateBy + (made.durationSeconds - lateBy) / 2;
    const [topLeft, topRight, belowEarly, belowLate] = await Promise.all([
      region(outFile, early, '640:360:0:0'),
      region(outFile, early, '640:360:640:0'),
      region(outFile, early, '640:360:320:360'),
      region(outFile, late, '640:360:320:360'),
    ]);
    console.log(`[recording] at ${early.toFixed(1)} s: ${JSON.stringify({ topLeft, topRight, belowEarly })}; at ${late.toFixed(1)} s: ${JSON.stringify(belowLate)}`);
    expect(belowEarly.saturation).toBeLessThan(5);
    expect(belowLate.saturation).toBeGreaterThan(40);
    // One of the top tiles is the camera's green picture, the other the screen's, which is not black either.
    const [camera, shared] = topLeft.saturation > topRight.saturation ? [topLeft, topRight] : [topRight, topLeft];
    expect(camera.saturation).toBeGreaterThan(40);
    expect(shared.brightest).toBeGreaterThan(30);
    // Both voices, two people's beeps at once kept under full scale by the limiter.
    expect(await peakLevel(outFile)).toBeLessThan(0);
  });
});

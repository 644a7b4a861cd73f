// One WebM of a recording from what Janus wrote (docs/design.md, "Recording
// with consent"): every usable `.mjr` under the recording's folder made a
// file by janus-pp-rec (VP8/VP9 to .webm, Opus to .opus), placed by the time
// its first packet was written, and composed by ffmpeg into one picture (a
// grid, `grid.ts`) and one mixed sound: VP8 at realtime settings, Opus.
import fs from 'node:fs/promises';
import path from 'node:path';
import { compositionFilter, type PlacedAudio, type PlacedVideo } from './grid.js';
import { listRecordedMedia, type RecordedMedium } from './mjr-files.js';
import { mediaDuration, RecordingToolError, runTool, type RunOptions } from './tools.js';

export interface ComposeOptions {
  /** The recording's folder, where Janus wrote its `.mjr` files. */
  rawDir: string;
  /** The WebM to write (its folder must exist); written under another name first, renamed when complete. */
  outFile: string;
  /** Aborting kills the program running and rejects. */
  signal?: AbortSignal;
  /** The picture: 1280x720 at 15 frames a second unless said. */
  width?: number;
  height?: number;
  fps?: number;
}

export interface ComposedRecording {
  durationSeconds: number;
  sizeBytes: number;
}

/** Nothing could be made: no media recorded, or none that could be read; the message says what was found. */
export class NothingRecordedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NothingRecordedError';
  }
}

/** A recorded medium made a playable file: where it sits in the recording. */
interface Converted {
  medium: RecordedMedium;
  file: string;
  durationSeconds: number;
}

/** A conversion's time limit: a minute, and a second more per MB of packets (a file converts at well over 10 MB/s here). */
const conversionTimeout = (bytes: number) => 60_000 + (bytes / 1_000_000) * 1000;
/**
 * The composition's: stopped when its progress report (every 5 s) has not come for two minutes, and in any
 * case after a minute and ten times the recording (a 2-core machine at a load of 40 ran it at 0.12x real time:
 * bench/README.md).
 */
const compositionTimeout = (seconds: number) => 60_000 + seconds * 10_000;
const COMPOSITION_IDLE_MS = 120_000;
const PROBE: Pick<RunOptions, 'timeoutMs'> = { timeoutMs: 30_000 };

async function convert(medium: RecordedMedium, workDir: string, index: number, signal?: AbortSignal): Promise<Converted | string> {
  const file = path.join(workDir, `${index}.${medium.medium === 'audio' ? 'opus' : 'webm'}`);
  const { size } = await fs.stat(medium.file);
  try {
    await runTool('janus-pp-rec', ['-o', medium.file, file], { timeoutMs: conversionTimeout(size), signal });
    const durationSeconds = await fs.stat(file).then(
      () => mediaDuration(file, { ...PROBE, signal }),
      () => 0,
    );
    return durationSeconds > 0 ? { medium, file, durationSeconds } : `${medium.file}: no media in it`;
  } catch (error) {
    if (signal?.aborted) throw error;
    return `${medium.file}: ${(error as Error).message}`;
  }
}

/** Converts every medium, two at a time (the machines have two cores); what could not be read is kept with why. */
async function convertAll(media: RecordedMedium[], workDir: string, signal?: AbortSignal): Promise<{ converted: Converted[]; failed: string[] }> {
  const results: (Converted | string)[] = new Array(media.length);
  let next = 0;
  const worker = async () => {
    while (next < media.length) {
      const index = next++;
      results[index] = await convert(media[index]!, workDir, index, signal);
    }
  };
  await Promise.all([worker(), worker()]);
  return {
    converted: results.filter((r): r is Converted => typeof r !== 'string'),
    failed: results.filter((r): r is string => typeof r === 'string'),
  };
}

/** The ffmpeg arguments for the converted files: inputs, the filter graph, the encoders. */
function compositionArgs(converted: Converted[], output: string, picture: { width: number; height: number; fps: number }): { args: string[]; durationSeconds: number } {
  const start = Math.min(...converted.map((c) => c.medium.startMs));
  const offset = (c: Converted) => (c.medium.startMs - start) / 1000;
  const durationSeconds = Math.max(...converted.map((c) => offset(c) + c.durationSeconds));
  // One tile per publication (`<peerId>-<kind>`), in the order they started.
  const tiles = [...new Set(converted.filter((c) => c.medium.medium === 'video').map((c) => c.medium.source))];
  const videos: PlacedVideo[] = [];
  const audios: PlacedAudio[] = [];
  converted.forEach((c, input) => {
    if (c.medium.medium === 'video') videos.push({ input, tile: tiles.indexOf(c.medium.source), offsetSeconds: offset(c) });
    else audios.push({ input, offsetSeconds: offset(c) });
  });
  const filter = compositionFilter({ ...picture, durationSeconds, tiles: Math.max(1, tiles.length), videos, audios });
  const args = [
    ...['-hide_banner', '-nostdin', '-y', '-loglevel', 'error'],
    // Progress on stdout every 5 s: a composition that stops making it is a stall (runTool's idleMs).
    ...['-nostats', '-progress', 'pipe:1', '-stats_period', '5'],
    // A simulcast publication changes size with its layer: the scale in the graph takes each frame as it comes
    // instead of the graph being built again (which would start the black picture over).
    ...converted.flatMap((c) => ['-reinit_filter', '0', '-i', c.file]),
    '-filter_complex',
    filter,
    '-map',
    '[vout]',
    '-map',
    '[aout]',
    ...['-c:v', 'libvpx', '-deadline', 'realtime', '-cpu-used', '8', '-threads', '2', '-b:v', '1M', '-g', String(picture.fps * 4)],
    ...['-c:a', 'libopus', '-b:a', '64k'],
    ...['-t', durationSeconds.toFixed(3), '-f', 'webm', output],
  ];
  return { args, durationSeconds };
}

function nothing(rawDir: string, found: number, reasons: string[]): NothingRecordedError {
  const why = reasons.length ? `:\n${reasons.slice(0, 10).join('\n')}` : '';
  return new NothingRecordedError(`nothing usable was recorded in ${rawDir} (${found} media file(s) found)${why}`);
}

/**
 * Makes the recording's one WebM (docs/design.md, "Recording with consent").
 * Throws NothingRecordedError when no medium could be used, RecordingToolError
 * when a program failed, ran out of time, or `signal` aborted it.
 */
export async function composeRecording(options: ComposeOptions): Promise<ComposedRecording> {
  const { rawDir, outFile, signal } = options;
  const picture = { width: options.width ?? 1280, height: options.height ?? 720, fps: options.fps ?? 15 };
  const listed = await listRecordedMedia(rawDir).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'ENOENT' ? new NothingRecordedError(`nothing was recorded: ${rawDir} does not exist`) : error;
  });
  const skipped = listed.skipped.map((s) => `${s.file}: ${s.why}`);
  if (!listed.media.length) throw nothing(rawDir, 0, skipped);
  const workDir = await fs.mkdtemp(path.join(path.dirname(outFile), '.compose-'));
  const partial = `${outFile}.partial`;
  try {
    const { converted, failed } = await convertAll(listed.media, workDir, signal);
    if (!converted.length) throw nothing(rawDir, listed.media.length, [...failed, ...skipped]);
    const { args, durationSeconds } = compositionArgs(converted, partial, picture);
    await runTool('ffmpeg', args, { timeoutMs: compositionTimeout(durationSeconds), idleMs: COMPOSITION_IDLE_MS, signal });
    await fs.rename(partial, outFile);
    const [{ size }, duration] = await Promise.all([fs.stat(outFile), mediaDuration(outFile, { ...PROBE, signal })]);
    return { durationSeconds: duration || durationSeconds, sizeBytes: size };
  } catch (error) {
    await fs.rm(partial, { force: true });
    throw error instanceof RecordingToolError || error instanceof NothingRecordedError ? error : new RecordingToolError(`the recording in ${rawDir} could not be composed: ${(error as Error).message}`, '');
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

// The raw files of a recording read by name and MJR header (docs/design.md, "Recording with consent").
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listRecordedMedia, parseMjrHeader, parseRecordedName } from './mjr-files.js';

/** An MJR00002 file's bytes as Janus 1.1.2 writes them: the header, then `packets` packets of 20 bytes. */
function mjr(header: Record<string, unknown>, packets = 1): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(2);
  length.writeUInt16BE(json.length);
  const packet = Buffer.concat([Buffer.from('MEET'), Buffer.alloc(16)]);
  return Buffer.concat([Buffer.from('MJR00002'), length, json, ...Array.from({ length: packets }, () => packet)]);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-mjr-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('a recorded file', () => {
  it('is named by its publication, the start of its part and its medium', () => {
    expect(parseRecordedName('p-7f3a-camera.1764380000000-audio-0.mjr')).toEqual({ source: 'p-7f3a-camera', part: 1764380000000, medium: 'audio' });
    expect(parseRecordedName('p1-screen.1764380000123-video-1.mjr')).toEqual({ source: 'p1-screen', part: 1764380000123, medium: 'video' });
    expect(parseRecordedName('videoroom-1234-user-5678-1764380000-video-0.mjr')).toBeNull();
    expect(parseRecordedName('p1-camera.1764380000000-video-1.webm')).toBeNull();
  });

  it('starts when its first packet was written, or when it was made', () => {
    const bytes = mjr({ t: 'v', c: 'vp8', s: 1_764_380_000_000_000, u: 1_764_380_000_250_000 });
    expect(parseMjrHeader(bytes, bytes.length)).toEqual({ medium: 'video', codec: 'vp8', startMs: 1_764_380_000_250, hasPackets: true });
    const empty = mjr({ t: 'a', c: 'opus', s: 1_764_380_000_000_000, u: 0 }, 0);
    expect(parseMjrHeader(empty, empty.length)).toEqual({ medium: 'audio', codec: 'opus', startMs: 1_764_380_000_000, hasPackets: false });
    expect(parseMjrHeader(Buffer.from('MJR00001xx'), 10)).toBeNull();
    expect(parseMjrHeader(bytes.subarray(0, 20), 20)).toBeNull();
  });

  it('is listed when it has media of a codec the composition takes, in order of start; the rest with why', async () => {
    const write = (name: string, bytes: Buffer) => fs.writeFileSync(path.join(dir, name), bytes);
    fs.mkdirSync(path.join(dir, 'later'));
    write('b-camera.2000-video-1.mjr', mjr({ t: 'v', c: 'vp8', s: 2_000_000, u: 2_500_000 }));
    write('a-camera.1000-audio-0.mjr', mjr({ t: 'a', c: 'opus', s: 1_000_000, u: 1_100_000 }));
    write('later/a-screen.3000-video-0.mjr', mjr({ t: 'v', c: 'vp9', s: 3_000_000, u: 3_000_000 }));
    write('a-camera.1000-video-1.mjr', mjr({ t: 'v', c: 'h264', s: 1_000_000, u: 1_000_000 }));
    write('b-camera.2000-audio-0.mjr', mjr({ t: 'a', c: 'opus', s: 2_000_000, u: 0 }, 0));
    write('b-camera.2000-data-2.mjr', mjr({ t: 'd', c: 'text', s: 2_000_000, u: 2_000_000 }));
    write('stray.mjr', mjr({ t: 'a', c: 'opus', s: 1, u: 1 }));
    const found = await listRecordedMedia(dir);
    expect(found.media.map((m) => [path.relative(dir, m.file), m.source, m.medium, m.startMs])).toEqual([
      ['a-camera.1000-audio-0.mjr', 'a-camera', 'audio', 1100],
      ['b-camera.2000-video-1.mjr', 'b-camera', 'video', 2500],
      ['later/a-screen.3000-video-0.mjr', 'a-screen', 'video', 3000],
    ]);
    expect(Object.fromEntries(found.skipped.map((s) => [path.relative(dir, s.file), s.why]))).toEqual({
      'a-camera.1000-video-1.mjr': 'codec h264',
      'b-camera.2000-audio-0.mjr': 'no packets',
      'b-camera.2000-data-2.mjr': 'data channel',
      'stray.mjr': 'not named <peerId>-<kind>.<startedMs>-<medium>-<mindex>.mjr',
    });
  });
});

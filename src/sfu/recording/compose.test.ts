// A recording with nothing usable in it fails with a clear error, and an abort stops the programs
// (docs/design.md, "Recording with consent"); real janus-pp-rec, no Janus.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { composeRecording, NothingRecordedError } from './compose.js';
import { RecordingToolError, runTool } from './tools.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-compose-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function folder(name: string, files: Record<string, Buffer> = {}): string {
  const made = path.join(dir, name);
  fs.mkdirSync(made);
  for (const [file, bytes] of Object.entries(files)) fs.writeFileSync(path.join(made, file), bytes);
  return made;
}

function header(json: Record<string, unknown>): Buffer {
  const text = Buffer.from(JSON.stringify(json));
  const length = Buffer.alloc(2);
  length.writeUInt16BE(text.length);
  return Buffer.concat([Buffer.from('MJR00002'), length, text]);
}

describe('a recording with nothing usable', () => {
  const outFile = () => path.join(dir, `out-${Math.random().toString(36).slice(2)}.webm`);

  it('names the folder that is missing or empty', async () => {
    await expect(composeRecording({ rawDir: path.join(dir, 'missing'), outFile: outFile() })).rejects.toThrow(/nothing was recorded: .*missing does not exist/);
    const empty = folder('empty');
    await expect(composeRecording({ rawDir: empty, outFile: outFile() })).rejects.toThrow(NothingRecordedError);
  });

  it('says which files were left out and why, and leaves no file behind', async () => {
    const silent = header({ t: 'a', c: 'opus', s: 1_000_000, u: 0 });
    // A header followed by bytes that are no packets: janus-pp-rec finds nothing to write.
    const broken = Buffer.concat([header({ t: 'v', c: 'vp8', s: 1_000_000, u: 1_000_000 }), Buffer.from('MEET'), Buffer.alloc(64, 7)]);
    const rawDir = folder('unusable', { 'p1-camera.1-audio-0.mjr': silent, 'p1-camera.1-video-1.mjr': broken });
    const out = outFile();
    const error = await composeRecording({ rawDir, outFile: out }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NothingRecordedError);
    expect((error as Error).message).toMatch(/nothing usable was recorded .*\(1 media file\(s\) found\)/);
    expect((error as Error).message).toContain('p1-camera.1-audio-0.mjr: no packets');
    expect((error as Error).message).toContain('p1-camera.1-video-1.mjr');
    expect(fs.readdirSync(dir).filter((name) => name.startsWith('.compose-') || name.endsWith('.partial'))).toEqual([]);
    expect(fs.existsSync(out)).toBe(false);
  });
});

describe('the programs', () => {
  it('are killed when the caller aborts, and when they run out of time, with stderr kept', async () => {
    const controller = new AbortController();
    const running = runTool('sleep', ['30'], { timeoutMs: 60_000, signal: controller.signal });
    controller.abort();
    await expect(running).rejects.toThrow(/sleep aborted/);
    await expect(runTool('sleep', ['30'], { timeoutMs: 100 })).rejects.toThrow(/sleep took longer than 0 s/);
    // A program that reports its progress and stops doing so is a stall, long before its ceiling.
    await expect(runTool('sh', ['-c', 'echo working; exec sleep 30'], { timeoutMs: 60_000, idleMs: 300 })).rejects.toThrow(/sh wrote nothing for 0 s/);
    const failed = await runTool('ffprobe', ['-v', 'error', path.join(dir, 'no-such-file.webm')], { timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(RecordingToolError);
    expect((failed as RecordingToolError).stderr).toMatch(/No such file/);
  });
});

// The programs that make a recording's file (docs/design.md, "Recording with
// consent"): Debian's janus-pp-rec, ffmpeg and ffprobe, run as children with
// a time limit, killed when the caller aborts, their stderr kept for the error.
import { spawn } from 'node:child_process';

export class RecordingToolError extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(stderr ? `${message}\n${stderr}` : message);
    this.name = 'RecordingToolError';
  }
}

/** The last lines of what a program wrote: where it says why it failed. */
const tail = (text: string, lines = 12) =>
  text
    .trim()
    .split(/[\r\n]+/)
    .slice(-lines)
    .join('\n');
const KEPT_BYTES = 64 * 1024;

export interface RunOptions {
  /** The most it may take: a ceiling only a hang reaches. */
  timeoutMs: number;
  /** Killed sooner when it writes nothing for this long (a program that reports its progress: a stall). */
  idleMs?: number;
  signal?: AbortSignal;
}

/** Runs `command`; resolves with its stdout when it exits with 0, rejects with its stderr's end otherwise. */
export function runTool(command: string, args: string[], options: RunOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new RecordingToolError(`${command}: aborted before it started`, ''));
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let stopped: string | null = null;
    let idle: NodeJS.Timeout | undefined;
    const stop = (why: string) => {
      stopped ??= why;
      child.kill('SIGKILL');
    };
    const heard = () => {
      if (!options.idleMs) return;
      clearTimeout(idle);
      idle = setTimeout(() => stop(`wrote nothing for ${Math.round(options.idleMs! / 1000)} s`), options.idleMs);
    };
    heard();
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout = (stdout + chunk).slice(-KEPT_BYTES);
      heard();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-KEPT_BYTES);
      heard();
    });
    const timer = setTimeout(() => stop(`took longer than ${Math.round(options.timeoutMs / 1000)} s`), options.timeoutMs);
    const onAbort = () => stop('aborted');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', (error) => {
      clearTimeout(timer);
      clearTimeout(idle);
      options.signal?.removeEventListener('abort', onAbort);
      reject(new RecordingToolError(`${command} could not be run (${error.message}): apt-get install janus-tools ffmpeg`, ''));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      clearTimeout(idle);
      options.signal?.removeEventListener('abort', onAbort);
      if (stopped) reject(new RecordingToolError(`${command} ${stopped}`, tail(stderr)));
      else if (code === 0) resolve(stdout);
      else reject(new RecordingToolError(`${command} failed (${code ?? signal})`, tail(stderr)));
    });
  });
}

/** A media file's duration in seconds (its container's), from ffprobe; 0 when it has none. */
export async function mediaDuration(file: string, options: RunOptions): Promise<number> {
  const out = await runTool('ffprobe', ['-v', 'error', '-show_entries', 'format=duration', '-of', 'default=noprint_wrappers=1:nokey=1', file], options);
  const duration = Number.parseFloat(out.trim());
  return Number.isFinite(duration) && duration > 0 ? duration : 0;
}

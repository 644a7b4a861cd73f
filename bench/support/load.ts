// Runs one load measurement in a separate process (load-worker.ts) and reads
// its result. A hard timeout kills a worker that does not stop by itself.
import { execFile, spawn } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { root } from './processes.js';

export interface LoadSpec {
  origin: string;
  method: 'GET' | 'POST' | 'PUT';
  /** Requests cycle through these paths (one room after another). */
  paths: string[];
  token: string;
  body?: string;
  connections: number;
  seconds: number;
  maxRequests: number;
}

export interface LoadResult {
  requestsPerSecond: number;
  /** Latency in milliseconds. */
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
}

const execFileP = promisify(execFile);

const workerArgs = (spec: LoadSpec) => ['--import', 'tsx', path.join(root, 'bench/support/load-worker.ts'), JSON.stringify(spec)];

function checked(spec: LoadSpec, stdout: string): LoadResult {
  const result = JSON.parse(stdout.trim().split('\n').pop()!) as LoadResult;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${spec.method} ${spec.paths[0]}: ${result.non2xx} non-2xx answers and ${result.errors} errors in ${result.total} requests`);
  }
  return result;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const { stdout } = await execFileP(process.execPath, workerArgs(spec), {
    cwd: root,
    timeout: (spec.seconds + 30) * 1000,
    killSignal: 'SIGKILL',
    maxBuffer: 1 << 20,
  });
  return checked(spec, stdout);
}

/**
 * The same load, for measuring something else while it runs: `answered`
 * resolves at its first answer (the worker process takes a second or more to
 * start on a busy machine, so a fixed delay could measure before the load).
 */
export function startLoad(spec: LoadSpec): { answered: Promise<void>; result: Promise<LoadResult> } {
  const child = spawn(process.execPath, workerArgs(spec), { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  const timer = setTimeout(() => child.kill('SIGKILL'), (spec.seconds + 30) * 1000);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  const answered = new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
      if (stderr.includes('load: answered')) resolve();
    });
    child.once('exit', () => reject(new Error(`the load never got an answer: ${stderr.slice(-500)}`)));
  });
  const result = new Promise<LoadResult>((resolve, reject) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(checked(spec, stdout));
      else reject(new Error(`the load worker exited with ${code}: ${stderr.slice(-500)}`));
    }),
  );
  answered.catch(() => {});
  return { answered, result };
}

// Runs one load measurement in a separate process (load-worker.ts) and reads
// its result. A hard timeout kills a worker that does not stop by itself.
import { execFile } from 'node:child_process';
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

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const { stdout } = await execFileP(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'bench/support/load-worker.ts'), JSON.stringify(spec)],
    { cwd: root, timeout: (spec.seconds + 30) * 1000, killSignal: 'SIGKILL', maxBuffer: 1 << 20 },
  );
  const result = JSON.parse(stdout.trim().split('\n').pop()!) as LoadResult;
  if (result.non2xx > 0 || result.errors > 0) {
    throw new Error(`${spec.method} ${spec.paths[0]}: ${result.non2xx} non-2xx answers and ${result.errors} errors in ${result.total} requests`);
  }
  return result;
}

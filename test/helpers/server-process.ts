// A real Parley server process, started from the build (dist/, which `npm test`
// makes first), for the tests that kill, stop or starve it. Talks only to
// 127.0.0.1; every wait is bounded.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { createPostgresDatabase, testDb } from '../helpers/database.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = path.join(root, 'dist/src/main.js');

export const ADMIN_TOKEN = 'fault-admin-token-0123456789';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** Everything the process wrote (stdout and stderr), line by line. */
  output: string[];
  /** The Instance API token the first start printed, if this start printed one. */
  firstToken: string | null;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the server on a free port and resolves once it listens (or rejects with its output). */
export async function startServerProcess(env: Record<string, string>, timeoutMs = 90_000): Promise<ServerProcess> {
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
  const child = spawn(process.execPath, [MAIN], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: '0',
      PUBLIC_URL: 'http://parley.test',
      PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  let buffered = '';
  const collect = (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    output.push(...lines);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      if (buffered) output.push(buffered);
      resolve({ code, signal });
    }),
  );
  const started = Date.now();
  while (Date.now() - started < timeoutMs) {
    const listening = output.map(parseLine).find((line) => line?.msg === 'Parley is listening');
    if (listening) {
      const token = output.map((line) => /^\s+(prl_[A-Za-z0-9_-]{43})\s*$/.exec(line)?.[1]).find(Boolean) ?? null;
      return { child, url: `http://127.0.0.1:${String(listening.port)}`, output, firstToken: token, exited };
    }
    if (child.exitCode !== null || child.signalCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error(`the server did not start within ${timeoutMs} ms:\n${output.join('\n')}`);
}

export function parseLine(line: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(line);
    return value && typeof value === 'object' ? value : null;
  } catch {
    return null;
  }
}

/** Resolves with the exit of the process, or rejects after timeoutMs (and kills it). */
export async function waitForExit(server: ServerProcess, timeoutMs: number) {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      server.child.kill('SIGKILL');
      reject(new Error(`the server did not exit within ${timeoutMs} ms`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([server.exited, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Stops a server that a test left running (best effort, bounded). */
export async function stopServerProcess(server: ServerProcess | undefined): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  await waitForExit(server, 20_000).catch(() => {});
}

/** Issues an Instance API token for a new tenant through the admin API. */
export async function adminTenantToken(url: string): Promise<{ tenantId: string; token: string }> {
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const tenant = await (await fetch(`${url}/admin/tenants`, { method: 'POST', headers, body: JSON.stringify({ name: 'Faults' }) })).json();
  const issued = await (await fetch(`${url}/admin/tenants/${tenant.id}/tokens`, { method: 'POST', headers, body: '{}' })).json();
  return { tenantId: tenant.id, token: issued.token };
}

/**
 * The database for a server process, after TEST_DB: a fresh temporary
 * DATA_DIR (PGlite) or a fresh database on the test PostgreSQL server.
 * remove() deletes it again.
 */
export async function serverDatabase(): Promise<{ env: Record<string, string>; dataDir: string | null; remove(): Promise<void> }> {
  if (testDb === 'postgres') {
    const database = await createPostgresDatabase();
    return { env: { DATABASE_URL: database.url }, dataDir: null, remove: database.drop };
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-fault-'));
  return { env: { DATA_DIR: dataDir }, dataDir, remove: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
}

// A real Parley server process (node dist/src/main.js, from the build that
// `npm test` makes first), for the tests that kill, stop or starve it and for
// the cluster tests' several nodes. Talks only to 127.0.0.1; every wait is
// bounded. The process gets only the environment given here (not the test
// runner's), so what it sees is what the test says.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { SERVER_NODE_FLAGS } from '../../src/node-flags.js';
import { createPostgresDatabase, migratedPostgresTemplate, seedMigratedDataDir, testDb } from './database.js';
import { sleep } from './wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MAIN = path.join(root, 'dist/src/main.js');

export const ADMIN_TOKEN = 'fault-admin-token-0123456789';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  port: number;
  /** Everything the process wrote (stdout and stderr), line by line. */
  output: string[];
  /** The Instance API token the first start printed, if this start printed one. */
  firstToken: string | null;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface StartOptions {
  /** The port to listen on; 0 (the default) lets the system pick a free one. */
  port?: number;
  /** How long starting may take: PGlite's first open and migrations are slow on a busy 2-core machine. */
  timeoutMs?: number;
  /** A command the server runs under, which executes node in its own place (e.g. setpriv with fewer capabilities). */
  under?: string[];
}

/**
 * Starts the server and resolves once it listens and /readyz answers 200 (its
 * database answers; Redis may still be "degraded"), or rejects with its output.
 */
export async function startServerProcess(env: Record<string, string>, options: StartOptions = {}): Promise<ServerProcess> {
  const { port = 0, timeoutMs = 90_000, under = [] } = options;
  if (!fs.existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`npm run build\` first (npm test does)`);
  const [command, ...args] = [...under, process.execPath, ...SERVER_NODE_FLAGS, MAIN];
  const child = spawn(command!, args, {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      // A Janus of the process's own (SFU's default where janus is installed) only when the test asks for it:
      // the api set's server processes would each start one.
      SFU: 'off',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: 'http://parley.test',
      PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
      // The listening line (level info) is how the port is learnt: a LOG_LEVEL above info never starts.
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
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  const deadline = Date.now() + timeoutMs;
  let listening: Record<string, unknown> | undefined;
  while (Date.now() < deadline && !gone()) {
    listening ??= output.map(parseLine).find((line) => line?.msg === 'Parley is listening') ?? undefined;
    if (listening) {
      const url = `http://127.0.0.1:${String(listening.port)}`;
      const ready = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status === 200, () => false);
      if (ready) {
        const token = output.map((line) => /^\s+(prl_[A-Za-z0-9_-]{43})\s*$/.exec(line)?.[1]).find(Boolean) ?? null;
        return { child, url, port: Number(listening.port), output, firstToken: token, exited };
      }
    }
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`the server did not ${listening ? 'get ready' : 'start'} within ${timeoutMs} ms:\n${output.join('\n')}`);
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

/** Stops a server that a test left running (best effort, bounded): SIGTERM by default, SIGKILL like a machine that dies. */
export async function stopServerProcess(server: ServerProcess | undefined, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (!server || server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill(signal);
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
 * remove() deletes it again. `migrated`: a copy of the tests' migrated
 * database instead of an empty one, for a test that needs no first start (the
 * server then starts without PGlite's initdb and the migrations).
 */
export async function serverDatabase({ migrated = false } = {}): Promise<{ env: Record<string, string>; dataDir: string | null; remove(): Promise<void> }> {
  if (testDb === 'postgres') {
    const database = await createPostgresDatabase(migrated ? await migratedPostgresTemplate() : undefined);
    return { env: { DATABASE_URL: database.url }, dataDir: null, remove: database.drop };
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-fault-'));
  if (migrated) await seedMigratedDataDir(dataDir);
  return { env: { DATA_DIR: dataDir }, dataDir, remove: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
}

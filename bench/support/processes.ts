// Servers under test run as real processes, as an operator runs them: Parley
// as `npm start` does (`node dist/src/main.js` with src/node-flags.ts's flags,
// npm run build first), the baseline as its own node process. Output goes to
// a file (not a pipe the benchmark must drain), and every process is killed
// when the benchmark exits, however it exits.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVER_NODE_FLAGS } from '../../src/node-flags.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

export interface ServerProcess {
  url: string;
  pid: number;
  /** The server's output so far (Parley prints the first tenant's token there). */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

async function waitForHttp(url: string, child: ChildProcess, logFile: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${fs.readFileSync(logFile, 'utf8').slice(-3000)}`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server did not answer ${url} within ${timeoutMs} ms`);
}

export async function startProcess(options: {
  name: string;
  args: string[];
  env: Record<string, string>;
  port: number;
  readyPath: string;
}): Promise<ServerProcess> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `parley-bench-${options.name}-`));
  const logFile = path.join(dir, 'output.log');
  const fd = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, options.args, {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env },
    stdio: ['ignore', fd, fd],
  });
  fs.closeSync(fd);
  running.add(child);
  const url = `http://127.0.0.1:${options.port}`;
  try {
    await waitForHttp(url + options.readyPath, child, logFile);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    pid: child.pid!,
    output: () => fs.readFileSync(logFile, 'utf8'),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        await exited;
        clearTimeout(timer);
      }
      running.delete(child);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Parley from dist/ (built by `npm run build`). Rate limiting is off: it would
 * answer 429 to a benchmark's single token and measure the limiter instead.
 * `entry` may name another build (an earlier commit's, for before/after figures).
 * EXPECT_TOKEN=no: the database is not empty (a second server on it), no token is printed.
 */
export async function startParley(
  env: Record<string, string>,
  entry = path.join(root, 'dist/src/main.js'),
): Promise<ServerProcess & { instanceToken: string }> {
  if (!fs.existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
  const port = await freePort();
  const server = await startProcess({
    name: 'parley',
    args: [entry],
    // In NODE_OPTIONS, so that a benchmark's variant can set its own (--env-variants).
    // SFU=off unless a benchmark asks for Janus: the others measure what a local Janus would only add to.
    env: { NODE_OPTIONS: SERVER_NODE_FLAGS.join(' '), SFU: 'off', PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: `http://127.0.0.1:${port}`, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE: '0', ...env },
    port,
    readyPath: '/readyz',
  });
  const token = /prl_[A-Za-z0-9_-]{43}/.exec(server.output())?.[0];
  if (!token && env.EXPECT_TOKEN !== 'no') {
    await server.stop();
    throw new Error('Parley printed no Instance API token: the database was not empty');
  }
  return { ...server, instanceToken: token ?? '' };
}

/** The minimal node:http server of bench/baseline-server.ts, run through tsx like the benchmarks. */
export async function startBaseline(databaseUrl: string, poolSize: number, publicUrl: string, nodeFlags: string[] = []): Promise<ServerProcess> {
  const port = await freePort();
  return startProcess({
    name: 'baseline',
    args: [...nodeFlags, '--import', 'tsx', path.join(root, 'bench/baseline-server.ts')],
    env: { PORT: String(port), DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: String(poolSize), PUBLIC_URL: publicUrl },
    port,
    readyPath: '/healthz',
  });
}

/**
 * bench/independent-baseline-server.ts on its own database of the cluster at
 * `clusterUrl` (created here), with one tenant whose token it returns.
 */
export async function startIndependentBaseline(
  clusterUrl: string,
  poolSize: number,
  publicUrl: string,
  otherTenants = 0,
): Promise<ServerProcess & { token: string }> {
  const admin = new pg.Client({ connectionString: clusterUrl });
  await admin.connect();
  try {
    await admin.query('create database parley_independent');
  } finally {
    await admin.end();
  }
  const databaseUrl = clusterUrl.replace(/\/postgres$/, '/parley_independent');
  const server = await startIndependentServer(databaseUrl, poolSize, publicUrl);
  if (otherTenants > 0) {
    // Its own schema's tenants and tokens (created by the server at start), like those --tenants gives Parley.
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(
        `insert into tenants (id, default_return_url) select gen_random_uuid(), 'https://example.org/after' from generate_series(1, $1::int)`,
        [otherTenants],
      );
      await client.query(`insert into api_tokens (token_hash, tenant_id) select sha256(convert_to(id::text, 'UTF8')), id from tenants t
        where not exists (select 1 from api_tokens a where a.tenant_id = t.id)`);
      await client.query('analyze');
    } finally {
      await client.end();
    }
  }
  return server;
}

/** bench/independent-baseline-server.ts on the (empty) database at `databaseUrl`, with one tenant whose token it returns. */
export async function startIndependentServer(databaseUrl: string, poolSize: number, publicUrl: string): Promise<ServerProcess & { token: string }> {
  const token = `prl_${randomBytes(32).toString('base64url')}`;
  const port = await freePort();
  const server = await startProcess({
    name: 'independent',
    args: ['--import', 'tsx', path.join(root, 'bench/independent-baseline-server.ts')],
    env: { PORT: String(port), DATABASE_URL: databaseUrl, DATABASE_POOL_SIZE: String(poolSize), PUBLIC_URL: publicUrl, BENCH_API_TOKEN: token },
    port,
    readyPath: '/healthz',
  });
  return { ...server, token };
}

/** A call to Parley's admin API. */
export async function admin<T>(server: ServerProcess, method: string, pathname: string, body?: unknown): Promise<T> {
  const response = await fetch(server.url + pathname, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${method} ${pathname}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** A new tenant with an Instance token (and the tenant's id). */
export async function createTenant(server: ServerProcess, name: string): Promise<{ id: string; token: string }> {
  const tenant = await admin<{ id: string }>(server, 'POST', '/admin/tenants', { name });
  const issued = await admin<{ token: string }>(server, 'POST', `/admin/tenants/${tenant.id}/tokens`, { label: 'bench' });
  return { id: tenant.id, token: issued.token };
}

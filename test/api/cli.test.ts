// The `parley` command, spawned for real (node bin/parley.js, the compiled
// CLI in dist/) against a real server on an ephemeral 127.0.0.1 port, on the
// database of this run (PGlite data directory or a fresh PostgreSQL database).
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { CALLS_NODE_FLAGS } from '../../src/node-flags.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { createPostgresDatabase, testDb } from '../helpers/database.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/parley.js');
const COMPILED = path.join(ROOT, 'dist/src/cli/main.js');
const ADMIN = 'cli-test-admin-token-0123456789';
const SLOW = { timeout: 180_000 };

let dataDir: string;
let databaseUrl: string | null = null;
let dropDatabase: (() => Promise<void>) | null = null;
let server: RunningServer | null = null;
const announced: string[] = [];
/** The settings of the server under test: the database commands get the same. */
let serverEnv: Record<string, string>;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function parley(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

const admin = (...args: string[]) => parley(['admin', ...args], { PARLEY_URL: server!.url, PARLEY_ADMIN_TOKEN: ADMIN });

function json(run: Run): any {
  expect(run.code, run.stderr).toBe(0);
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout);
}

async function api(method: string, url: string, token: string, body?: unknown) {
  const res = await fetch(server!.url + url, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: res.status === 204 ? null : await res.json() };
}

const room = (overrides: Record<string, unknown> = {}) => ({ name: 'CLI room', meeting_duration: 30, scheduled_at: '2020-01-01T10:00:00Z', ...overrides });

beforeAll(async () => {
  if (!existsSync(COMPILED)) {
    throw new Error(`${path.relative(ROOT, COMPILED)} is missing: the CLI tests run the compiled command. Run \`npm run build\` first (npm test does).`);
  }
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-cli-'));
  if (testDb === 'postgres') ({ url: databaseUrl, drop: dropDatabase } = await createPostgresDatabase());
  serverEnv = { DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
  const config = loadConfig({ ...serverEnv, PORT: '0', HOST: '127.0.0.1', PARLEY_ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'silent', CLEANUP_INTERVAL_SECONDS: '86400' });
  server = await startServer(config, { announce: (line) => announced.push(line) });
}, 120_000);

afterAll(async () => {
  await server?.close();
  await dropDatabase?.();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('usage', () => {
  it('--help, -h and help print the usage and exit 0', async () => {
    for (const flag of ['--help', '-h', 'help']) {
      const run = await parley([flag]);
      expect(run.code).toBe(0);
      for (const command of ['parley start', 'parley migrate', 'parley cleanup', 'parley admin tenants create', 'parley admin features set']) {
        expect(run.stdout).toContain(command);
      }
    }
  });

  it('no command, an unknown command or a wrong admin command exit 2 with a message and the usage', async () => {
    for (const args of [[], ['launch'], ['admin'], ['admin', 'rooms', 'list'], ['migrate', 'now']]) {
      const run = await parley(args, { PARLEY_ADMIN_TOKEN: ADMIN });
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^parley: /);
      expect(run.stderr).toContain('Usage: parley');
      expect(run.stdout).toBe('');
    }
  });
});

describe('parley admin', () => {
  it('tenants list shows the tenant "default" made at first start', async () => {
    const { tenants } = json(await admin('tenants', 'list'));
    expect(tenants.map((t: { name: string }) => t.name)).toContain('default');
    expect(announced.join('\n')).toMatch(/prl_[A-Za-z0-9_-]{43}/);
  });

  it('creates a tenant, organization, doctor and tokens whose rooms follow the scopes', async () => {
    const tenant = json(await admin('tenants', 'create', '--name', 'CLI Clinic', '--timezone', 'Europe/Paris', '--default-return-url', 'https://cli.example/bye'));
    expect(tenant).toMatchObject({ name: 'CLI Clinic', timezone: 'Europe/Paris', default_return_url: 'https://cli.example/bye' });
    expect(json(await admin('tenants', 'list')).tenants).toContainEqual(tenant);

    const org = json(await admin('organizations', 'create', '--tenant', tenant.id, '--name', 'North'));
    expect(org).toEqual({ id: expect.any(String), tenant_id: tenant.id, name: 'North' });
    const doctor = json(await admin('doctors', 'create', '--organization', org.id, '--name', 'Dr. Kim'));
    expect(doctor).toEqual({ id: expect.any(String), organization_id: org.id, name: 'Dr. Kim' });

    const instance = json(await admin('tokens', 'create', '--tenant', tenant.id, '--label', 'booking'));
    expect(instance).toMatchObject({ kind: 'instance', organization_id: null, label: 'booking', token: expect.stringMatching(/^prl_/) });
    const orgToken = json(await admin('tokens', 'create', '--tenant', tenant.id, '--organization', org.id));
    expect(orgToken).toMatchObject({ kind: 'organization', organization_id: org.id });

    const created = await api('POST', '/api/rooms', instance.token, room({ doctor_id: doctor.id }));
    expect(created.status).toBe(201);
    expect(created.body.return_url).toBe('https://cli.example/bye');
    expect((await api('GET', `/api/rooms/${created.body.token}`, orgToken.token)).status).toBe(200);

    const revoked = json(await admin('tokens', 'revoke', orgToken.id));
    expect(revoked).toEqual({ id: orgToken.id, revoked: true });
    expect((await api('GET', '/api/rooms', orgToken.token)).status).toBe(401);
    expect((await api('GET', '/api/rooms', instance.token)).status).toBe(200);
  }, 180_000);

  it('features set: tenant on/off, organization override and clear', async () => {
    const tenant = json(await admin('tenants', 'create', '--name', 'Features'));
    const org = json(await admin('organizations', 'create', '--tenant', tenant.id, '--name', 'O'));
    const token = json(await admin('tokens', 'create', '--tenant', tenant.id, '--organization', org.id)).token;
    const permanent = () => api('POST', '/api/rooms', token, room({ permanent: true }));

    expect((await permanent()).status).toBe(422);
    expect(json(await admin('features', 'set', 'permanent_rooms', 'on', '--tenant', tenant.id))).toEqual({ feature: 'permanent_rooms', enabled: true });
    expect((await permanent()).status).toBe(201);
    expect(json(await admin('features', 'set', 'permanent_rooms', 'off', '--organization', org.id))).toEqual({ feature: 'permanent_rooms', enabled: false });
    expect((await permanent()).status).toBe(422);
    expect(json(await admin('features', 'set', 'permanent_rooms', 'clear', '--organization', org.id))).toEqual({ feature: 'permanent_rooms', enabled: null });
    expect((await permanent()).status).toBe(201);
  }, 180_000);

  it('webhooks list: a tenant\u2019s endpoints and their deliveries, never their secrets', async () => {
    const tenant = json(await admin('tenants', 'create', '--name', 'Hooks'));
    const token = json(await admin('tokens', 'create', '--tenant', tenant.id)).token;
    expect(json(await admin('webhooks', 'list', '--tenant', tenant.id))).toEqual({ webhook_endpoints: [] });
    const created = await api('POST', '/api/webhook_endpoints', token, { url: 'https://93.184.216.34/hooks', events: ['room.closed'] });
    expect(created.status).toBe(201);
    const listed = json(await admin('webhooks', 'list', '--tenant', tenant.id));
    expect(listed.webhook_endpoints).toEqual([
      expect.objectContaining({ id: created.body.id, url: 'https://93.184.216.34/hooks', events: ['room.closed'], status: 'enabled', messages: { pending: 0, delivered: 0, failed: 0 } }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(created.body.secret.slice(6));
    const missing = await admin('webhooks', 'list', '--tenant', '00000000-0000-4000-8000-000000000000');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/404: Tenant not found/);
  }, 180_000);

  it('API errors exit 1 with the server’s message on stderr', async () => {
    const blank = await admin('tenants', 'create', '--name', ' ');
    expect(blank.code).toBe(1);
    expect(blank.stderr).toBe("parley: 400: name can't be blank\n");
    expect(blank.stdout).toBe('');

    const missing = await admin('organizations', 'create', '--tenant', '00000000-0000-4000-8000-000000000000', '--name', 'x');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/404: Tenant not found/);

    const feature = await admin('features', 'set', 'teleport', 'on', '--tenant', '00000000-0000-4000-8000-000000000000');
    expect(feature.code).toBe(1);
    expect(feature.stderr).toMatch(/400: feature is not a known feature/);
  });

  it('a wrong admin token exits 1 with 401; a missing one exits 1 naming the variable', async () => {
    const wrong = await parley(['admin', 'tenants', 'list'], { PARLEY_URL: server!.url, PARLEY_ADMIN_TOKEN: 'not-the-admin-token' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/401: Missing or invalid admin token/);
    const unset = await parley(['admin', 'tenants', 'list'], { PARLEY_URL: server!.url });
    expect(unset.code).toBe(1);
    expect(unset.stderr).toMatch(/PARLEY_ADMIN_TOKEN is not set/);
  });

  it('an unreachable server exits 1 saying so', async () => {
    const closed = await parley(['admin', 'tenants', 'list'], { PARLEY_URL: 'http://127.0.0.1:9', PARLEY_ADMIN_TOKEN: ADMIN });
    expect(closed.code).toBe(1);
    expect(closed.stderr).toMatch(/cannot reach Parley at http:\/\/127\.0\.0\.1:9/);
    const bad = await parley(['admin', 'tenants', 'list'], { PARLEY_URL: 'ftp://x', PARLEY_ADMIN_TOKEN: ADMIN });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/PARLEY_URL/);
  });

  it('command-line mistakes exit 2 before any call', async () => {
    for (const args of [
      ['organizations', 'create', '--name', 'no tenant'],
      ['tenants', 'create', '--name', 'x', '--colour', 'blue'],
      ['tokens', 'revoke'],
      ['features', 'set', 'permanent_rooms', 'maybe', '--tenant', 'x'],
      ['features', 'set', 'permanent_rooms', 'on'],
      ['features', 'set', 'permanent_rooms', 'clear', '--tenant', 'x'],
    ]) {
      const run = await admin(...args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^parley: /);
    }
  });
});

describe('parley migrate and parley cleanup', SLOW, () => {
  let token: string;
  let due: { token: string };
  let kept: { token: string };

  beforeAll(async () => {
    const tenant = json(await admin('tenants', 'create', '--name', 'Cleanup'));
    json(await admin('features', 'set', 'permanent_rooms', 'on', '--tenant', tenant.id));
    token = json(await admin('tokens', 'create', '--tenant', tenant.id)).token;
    due = (await api('POST', '/api/rooms', token, room())).body;
    kept = (await api('POST', '/api/rooms', token, room({ permanent: true }))).body;
  }, 180_000);

  it('while the server runs: refused on PGlite, done on PostgreSQL', async () => {
    const migrate = await parley(['migrate'], serverEnv);
    const cleanup = await parley(['cleanup'], serverEnv);
    if (testDb === 'pglite') {
      for (const run of [migrate, cleanup]) {
        expect(run.code).toBe(1);
        expect(run.stderr).toMatch(/in use by another Parley process \(pid \d+\)/);
        expect(run.stdout).toBe('');
      }
    } else {
      expect(json(migrate)).toEqual({ database: expect.stringMatching(/^PostgreSQL /), applied: [] });
      expect(json(cleanup)).toEqual({ deleted: 0 });
    }
    expect((await api('GET', `/api/rooms/${due.token}`, token)).status).toBe(200);
  });

  it('on the stopped server’s database: migrate has nothing to do, cleanup deletes due rooms and keeps permanent ones', async () => {
    await server!.close();
    server = null;
    expect(json(await parley(['migrate'], serverEnv))).toEqual({ database: expect.any(String), applied: [] });
    // Default retention (30 days): nothing is due yet.
    expect(json(await parley(['cleanup'], serverEnv))).toEqual({ deleted: 0 });
    // CLEANUP_AFTER_DAYS=0: a room is due as soon as its schedule and its creation are past.
    expect(json(await parley(['cleanup'], { ...serverEnv, CLEANUP_AFTER_DAYS: '0' })).deleted).toBeGreaterThanOrEqual(1);

    const config = loadConfig({ ...serverEnv, PORT: '0', HOST: '127.0.0.1', PARLEY_ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'silent', CLEANUP_INTERVAL_SECONDS: '86400' });
    server = await startServer(config, { announce: (line) => announced.push(line) });
    expect((await api('GET', `/api/rooms/${due.token}`, token)).status).toBe(404);
    expect((await api('GET', `/api/rooms/${kept.token}`, token)).status).toBe(200);
  });

  it('a bad setting exits 1 naming the variable', async () => {
    const run = await parley(['migrate'], { DATABASE_URL: 'mysql://nope' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/DATABASE_URL/);
  });
});

describe('an empty database: parley migrate, then parley start', SLOW, () => {
  async function waitFor(check: () => boolean, ms: number, what: string, output: () => string) {
    const until = Date.now() + ms;
    while (!check()) {
      if (Date.now() > until) throw new Error(`${what} within ${ms} ms; output:\n${output()}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** `parley start`, or with `args` another way of starting the server. */
  function start(env: Record<string, string>, args = [BIN, 'start']) {
    // SFU=off: `parley start` would start a local Janus where one is installed, which this test is not about.
    const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', SFU: 'off', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let exitCode: number | null | undefined;
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve((exitCode = code))));
    const read = () => output;
    return {
      child,
      exited,
      output: read,
      async port(): Promise<number> {
        await waitFor(() => output.includes('Parley is listening') || exitCode !== undefined, 90_000, 'parley start did not listen', read);
        expect(exitCode, output).toBeUndefined();
        return JSON.parse(output.split('\n').find((line) => line.includes('Parley is listening'))!).port;
      },
      waitFor: (check: () => boolean, ms: number, what: string) => waitFor(check, ms, what, read),
    };
  }

  it('migrate applies every migration once; the first start prints a working token once; SIGTERM stops it cleanly; only a start without the Node flags warns', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-cli-fresh-'));
    const postgres = testDb === 'postgres' ? await createPostgresDatabase() : null;
    const env = { DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ...(postgres ? { DATABASE_URL: postgres.url } : {}) };
    try {
      const first = json(await parley(['migrate'], env));
      expect(first.applied).toContain('0001_initial.sql');
      expect(first.applied).toEqual([...first.applied].sort());
      expect(json(await parley(['migrate'], env)).applied).toEqual([]);

      // The calls on the server's own event loop: `parley start` gives it their flags.
      const server1 = start({ ...env, CALLS_PROCESS: 'inline' });
      const port = await server1.port();
      // The token is announced right after the listening line.
      await server1.waitFor(() => server1.output().includes('Try: curl'), 60_000, 'no first-start token');
      const token = /prl_[A-Za-z0-9_-]{43}/.exec(server1.output())![0];
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const rooms = await fetch(`http://127.0.0.1:${port}/api/rooms`, { headers: { authorization: `Bearer ${token}` } });
      expect(rooms.status).toBe(200);
      // `parley start` started the server with src/node-flags.ts's flags: nothing to warn about.
      expect(server1.output()).not.toContain('started without');
      server1.child.kill('SIGTERM');
      expect(await server1.exited).toBe(0);

      // With the calls on its own event loop (CALLS_PROCESS=inline) and started by hand without their flags,
      // the server still runs, and says what it misses and how to start it.
      const server2 = start({ ...env, CALLS_PROCESS: 'inline' }, [path.join(ROOT, 'dist/src/main.js')]);
      await server2.port();
      await server2.waitFor(() => server2.output().includes('started without'), 60_000, 'no warning about the missing flags');
      const warning = JSON.parse(server2.output().split('\n').find((line) => line.includes('started without'))!);
      expect(warning).toMatchObject({ level: 40, missing: CALLS_NODE_FLAGS });
      expect(warning.msg).toContain(`node ${CALLS_NODE_FLAGS.join(' ')} dist/src/main.js`);
      await new Promise((resolve) => setTimeout(resolve, 500)); // proves that no token is printed late
      expect(server2.output()).not.toMatch(/prl_[A-Za-z0-9_-]{43}/);
      server2.child.kill('SIGTERM');
      expect(await server2.exited).toBe(0);
    } finally {
      await postgres?.drop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

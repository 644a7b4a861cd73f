// The server runs the embedded database's autovacuum and checkpoints
// (src/db/embedded-maintenance.ts) on PGlite, and leaves them to PostgreSQL's
// own workers on PostgreSQL.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startServer } from '../../src/server.js';
import { createPostgresDatabase, testDb } from '../helpers/database.js';
import { waitFor } from '../helpers/wait.js';

let dataDir: string;
let dropDatabase: (() => Promise<void>) | undefined;
let server: Awaited<ReturnType<typeof startServer>>;
let token: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-maintenance-'));
  let databaseUrl: string | undefined;
  if (testDb === 'postgres') ({ url: databaseUrl, drop: dropDatabase } = await createPostgresDatabase());
  const announced: string[] = [];
  const config = loadConfig({
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'silent',
    EMBEDDED_MAINTENANCE_INTERVAL_SECONDS: '1',
  });
  server = await startServer(config, { announce: (line) => announced.push(line) });
  token = /prl_[A-Za-z0-9_-]{43}/.exec(announced.join('\n'))![0];
}, 60_000);

afterAll(async () => {
  await server?.close();
  await dropDatabase?.();
  rmSync(dataDir, { recursive: true, force: true });
});

const maintenanceRuns = async () =>
  Number(/parley_job_runs_total\{job="embedded-maintenance",outcome="ok"\} (\d+)/.exec(await (await fetch(`${server.url}/metrics`)).text())?.[1] ?? 0);

it(`${testDb === 'pglite' ? 'runs' : 'does not run'} the embedded database maintenance`, async () => {
  // Enough new rooms for an ANALYZE of rooms (50 + 10 % of its rows).
  for (let i = 0; i < 60; i++) {
    const created = await fetch(`${server.url}/api/rooms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Room ${i}`, meeting_duration: 30, scheduled_at: '2030-01-01T10:00:00Z' }),
    });
    expect(created.status).toBe(201);
  }
  const since = await maintenanceRuns();
  if (testDb === 'postgres') {
    await new Promise((resolve) => setTimeout(resolve, 2500)); // proves that no run comes (the interval is 1 s)
    expect(await maintenanceRuns()).toBe(0);
    return;
  }
  // Two more runs (every second): at least one began after the rooms were made. Waited for, not slept for.
  await waitFor(async () => (await maintenanceRuns()) >= since + 2, 60_000, 'two more maintenance runs');
  const { rows } = await sql<{ last_analyze: Date | null }>`select last_analyze from pg_stat_user_tables where relname = 'rooms'`.execute(
    server.services.database.db,
  );
  expect(rows[0]!.last_analyze).not.toBeNull();
}, 120_000);

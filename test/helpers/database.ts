// The database a test runs against: in-memory PGlite (TEST_DB=pglite, the
// default) or a fresh database on the PostgreSQL server of TEST_DATABASE_URL
// (TEST_DB=postgres), dropped again at the end.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
// @ts-expect-error plain ESM script without types
import { startPostgres } from '../../scripts/postgres.mjs';
import { openPGlite, openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';

export const testDb = (process.env.TEST_DB ?? 'pglite') as 'pglite' | 'postgres';

function serverUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DB=postgres needs TEST_DATABASE_URL (npm test starts a throwaway PostgreSQL and sets it)');
  return url;
}

/** A fresh, empty PostgreSQL database; returns its URL and a function that drops it. */
export async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const server = serverUrl();
  const name = `parley_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: server });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}

/** A migrated database for one test file; close() releases (and on PostgreSQL drops) it. */
export async function openTestDatabase(): Promise<DatabaseHandle & { url: string | null }> {
  if (testDb === 'pglite') {
    const handle = await openPGlite(null);
    await migrate(handle);
    return { ...handle, url: null };
  }
  const { url, drop } = await createPostgresDatabase();
  const handle = await openPostgres(url, 10);
  await migrate(handle);
  return {
    ...handle,
    url,
    close: async () => {
      await handle.close();
      await drop();
    },
  };
}

export interface OwnPostgres {
  url: string;
  /** pg_ctl stop: `fast` closes the connections; `immediate` is the server dying (crash recovery on start). */
  halt(mode: 'fast' | 'immediate'): Promise<void>;
  /** pg_ctl start on the same data and port. */
  resume(): Promise<void>;
  /** Stops it for good and deletes its data. */
  stop(): Promise<void>;
}

/**
 * A throwaway PostgreSQL cluster of the test's own, never the shared test
 * server, for the tests that stop and start it (the fault and cluster tests).
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const cluster: { url: string; dataDir: string; binDir: string; stop(): Promise<void> } = await startPostgres({ handleSignals: false });
  // As the postgres user when we are root (as scripts/postgres.mjs starts it).
  const pgCtl = async (args: string[]) => {
    const pgctl = path.join(cluster.binDir, 'pg_ctl');
    const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', pgctl, ...args]] : [pgctl, args];
    await promisify(execFile)(file, argv, { timeout: 60_000 });
  };
  return {
    url: cluster.url,
    halt: (mode) => pgCtl(['-D', cluster.dataDir, '-m', mode, '-w', '-t', '60', 'stop']),
    resume: () => pgCtl(['-D', cluster.dataDir, '-l', path.join(path.dirname(cluster.dataDir), 'postgres.log'), '-w', '-t', '60', 'start']),
    stop: () => cluster.stop(),
  };
}

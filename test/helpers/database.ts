// The database a test runs against: in-memory PGlite (TEST_DB=pglite, the
// default) or a fresh database on the PostgreSQL server of TEST_DATABASE_URL
// (TEST_DB=postgres), dropped again at the end.
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
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

/** A fresh PostgreSQL database, empty or a copy of `template`; returns its URL and a function that drops it. */
export async function createPostgresDatabase(template?: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const server = serverUrl();
  const name = `parley_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  try {
    await admin.query(`create database ${name}${template ? ` template ${template}` : ''}`);
  } finally {
    await admin.end();
  }
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

const root = path.resolve(import.meta.dirname, '../..');
let migratedPGlite: Promise<string> | null = null;
let migratedPostgres: Promise<string> | null = null;

/** A hash of this tree's migrations (and of `extra`): a migrated copy made from other migrations is never used. */
function migrationsKey(extra: Buffer | string = ''): string {
  const migrations = path.join(root, 'src/db/migrations');
  const hash = createHash('sha256').update(extra).update(fs.readFileSync(path.join(root, 'src/db/migrate.ts')));
  for (const name of fs.readdirSync(migrations).sort()) hash.update(name).update(fs.readFileSync(path.join(migrations, name)));
  return hash.digest('hex').slice(0, 16);
}

/**
 * A migrated database on the test server that each file's database is copied
 * from (CREATE DATABASE ... TEMPLATE), made once per server and migrations:
 * the copy takes a fraction of the migrations' time. Made under an advisory
 * lock, and marked (its comment) once migrated: one left half-made by a killed
 * run is made again.
 */
export function migratedPostgresTemplate(): Promise<string> {
  migratedPostgres ??= (async () => {
    const name = `parley_template_${migrationsKey()}`;
    const admin = new pg.Client({ connectionString: serverUrl() });
    await admin.connect();
    try {
      await admin.query('select pg_advisory_lock(hashtext($1))', [name]);
      const { rows } = await admin.query(`select shobj_description(oid, 'pg_database') as mark from pg_database where datname = $1`, [name]);
      if (rows[0]?.mark === 'migrated') return name;
      if (rows.length) await admin.query(`drop database ${name} with (force)`);
      await admin.query(`create database ${name}`);
      const url = new URL(serverUrl());
      url.pathname = `/${name}`;
      const handle = await openPostgres(url.toString(), 2);
      try {
        await migrate(handle);
        // Through Kysely once: its destroy() (close) ends the pool only if it has used it, and a
        // connection left open to the template would refuse every copy of it.
        await handle.ping();
      } finally {
        await handle.close();
      }
      await admin.query(`comment on database ${name} is 'migrated'`);
      return name;
    } finally {
      await admin.end();
    }
  })();
  return migratedPostgres;
}

/**
 * A tarball of a migrated PGlite data directory (PGlite's dumpDataDir), made
 * once per machine for this PGlite and these migrations and kept in the
 * temporary directory: a new in-memory PGlite runs its initdb, which is most
 * of a test file's setup (4x the time of loading the tarball, and more than the
 * migrations), and the api set opens one per file, twice per worker at once.
 * Made under a name of its own and renamed into place, so a reader never sees
 * half of one.
 */
function migratedPGliteTarball(): Promise<string> {
  migratedPGlite ??= (async () => {
    const version = fs.readFileSync(path.join(path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), '../package.json'));
    const tarball = path.join(os.tmpdir(), `parley-pglite-migrated-${migrationsKey(version)}.tar`);
    if (fs.existsSync(tarball)) return tarball;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-pglite-migrating-'));
    try {
      const handle = await openPGlite(dir);
      await migrate(handle);
      await handle.close();
      const pglite = await PGlite.create(path.join(dir, 'pglite'));
      const dump = await pglite.dumpDataDir('none');
      await pglite.close();
      fs.writeFileSync(path.join(dir, 'migrated.tar'), Buffer.from(await dump.arrayBuffer()));
      fs.renameSync(path.join(dir, 'migrated.tar'), tarball);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    return tarball;
  })();
  return migratedPGlite;
}

/**
 * Makes dataDir a migrated PGlite DATA_DIR (the tarball above unpacked where
 * openPGlite looks), for a server of the test's own that needs no first start:
 * its start then skips PGlite's initdb and the migrations.
 */
export async function seedMigratedDataDir(dataDir: string): Promise<void> {
  const tarball = await migratedPGliteTarball();
  const target = path.join(dataDir, 'pglite');
  fs.mkdirSync(target, { recursive: true });
  await promisify(execFile)('tar', ['-xf', tarball, '-C', target]);
}

/** TEST_DB_COPY=0: every test database made new and migrated, not copied (to compare, or to rule the copy out). */
const copyMigrated = process.env.TEST_DB_COPY !== '0';

/** A migrated database for one test file; close() releases (and on PostgreSQL drops) it. */
export async function openTestDatabase(): Promise<DatabaseHandle & { url: string | null }> {
  if (testDb === 'pglite') {
    const handle = await openPGlite(null, copyMigrated ? { loadDataDir: await migratedPGliteTarball() } : {});
    // Nothing to do on the migrated copy (what it finds applied is what this tree's migrations are), all on a new one.
    await migrate(handle);
    return { ...handle, url: null };
  }
  const { url, drop } = await createPostgresDatabase(copyMigrated ? await migratedPostgresTemplate() : undefined);
  const handle = await openPostgres(url, 10);
  // Nothing to do on the migrated copy: what it finds applied is what this tree's migrations are.
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

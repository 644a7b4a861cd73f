// One database interface over PGlite (embedded, the default) and PostgreSQL
// (DATABASE_URL). Everything above this module talks to Kysely only.
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { PGliteDialect } from './pglite-dialect.js';
import { PGliteThread, type PGliteChannel } from './pglite-thread.js';
import type { RemotePGlite } from './remote-pglite.js';
import { runStatementsWith } from './prepared.js';
import type { Database } from './schema.js';
import { ShapedQuery, type RowShapes } from './shaped-query.js';
import { DATE, INT8, keepText, parseInt8 } from './type-parsers.js';

export type Db = Kysely<Database>;

/** Runs multi-statement SQL scripts (the simple protocol) for migrations. */
export interface ScriptRunner {
  exec(script: string): Promise<void>;
  names(query: string): Promise<string[]>;
}

export interface DatabaseHandle {
  db: Db;
  /** Runs fn alone across every process that shares the database (migrations). */
  withScriptRunner<T>(fn: (runner: ScriptRunner) => Promise<T>): Promise<T>;
  kind: 'pglite' | 'postgres';
  /** A short description for logs: never includes a password. */
  description: string;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** The embedded database's worker thread (PGlite in this process only): the calls process's statements are run on it. */
  thread?: PGliteThread;
  /** Pool connections by state (PostgreSQL only: PGlite is one in-process connection). */
  poolStats?(): { total: number; idle: number; waiting: number };
}

export class DatabaseLockedError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `The embedded database in ${dataDir} is in use by another Parley process (pid ${pid}). ` +
        'PGlite allows one process per data directory: stop that process first, or run this command against the running server.',
    );
    this.name = 'DatabaseLockedError';
  }
}


function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = parsed.password ? '***' : '';
    return `PostgreSQL ${parsed.host}${parsed.pathname}`;
  } catch {
    return 'PostgreSQL';
  }
}

/** preparedStatements false: every statement unnamed (for a pooler that cannot keep named ones, docs/configuration.md). */
export async function openPostgres(url: string, poolSize: number, preparedStatements = true): Promise<DatabaseHandle> {
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    // Fail fast instead of hanging when the server is down (503, not a stuck request).
    connectionTimeoutMillis: 5000,
    // Our named statements (prepared.ts) are written to have one plan for every value, so each
    // connection keeps its generic plan. PostgreSQL's own choice re-planned the token lookup on
    // every request (167 µs of PostgreSQL's CPU): a custom plan for a one-digest array looks
    // cheaper than the generic plan's guess of ten (bench/README.md). Unnamed statements are
    // planned for their values as before. Not sent without named statements: a pooler may refuse
    // startup options.
    ...(preparedStatements ? { options: '-c plan_cache_mode=force_generic_plan' } : {}),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') => {
        if (oid === INT8) return parseInt8;
        if (oid === DATE) return keepText;
        return pg.types.getTypeParser(oid, format);
      }) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client losing its connection must not crash the process.
  pool.on('error', () => {});
  // A client checked out but between two statements (inside a transaction)
  // has no query to fail when the server goes away, so pg emits 'error' on the
  // client itself, and with no listener that crashes the process (found by
  // test/faults/postgres-outage.test.ts). Its next statement fails instead (a
  // 503), and the pool drops the client when it is released.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  // prepare()'s statements, straight on the pool (prepared.ts), each keeping its rows'
  // shape (shaped-query.ts). The client goes back to the pool as Kysely's would: an
  // error of the statement keeps the connection.
  const shapes: RowShapes = new Map();
  runStatementsWith(db, (name, text, parameters) => {
    const statement = { ...(preparedStatements ? { name } : {}), text, values: parameters as unknown[] };
    return new Promise((resolve, reject) =>
      pool.connect((connectError, client, release) => {
        if (connectError || !client) return reject(connectError);
        client.query(
          new ShapedQuery(statement, shapes, (error, result) => {
            release();
            if (error) reject(error);
            else resolve(result.rows);
          }),
        );
      }),
    );
  });
  return {
    db,
    withScriptRunner: async (fn) => {
      const client = await pool.connect();
      try {
        // Nodes starting together migrate one at a time.
        await client.query('select pg_advisory_lock(7220001)');
        return await fn({
          exec: async (script) => void (await client.query(script)),
          names: async (query) => (await client.query<{ name: string }>(query)).rows.map((r) => r.name),
        });
      } finally {
        await client.query('select pg_advisory_unlock(7220001)').catch(() => {});
        client.release();
      }
    },
    kind: 'postgres',
    description: describeDatabaseUrl(url),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
  };
}

/** Takes the data directory's lock file, or throws DatabaseLockedError if a live process holds it. */
function lockDataDir(dataDir: string): () => void {
  const lockPath = path.join(dataDir, 'parley.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockPath, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(lockPath, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(fs.readFileSync(lockPath, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DatabaseLockedError(dataDir, pid);
      }
      // A stale lock left by a process that died: take it over.
      fs.rmSync(lockPath, { force: true });
    }
  }
  throw new Error(`Could not lock ${lockPath}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A handle over PGlite through `channel`: the worker thread, or the main process's from the calls process. */
function overChannel(channel: PGliteChannel): Omit<DatabaseHandle, 'description' | 'close'> {
  const db = new Kysely<Database>({ dialect: new PGliteDialect(channel) });
  // prepare()'s statements straight to the thread (prepared.ts), as on PostgreSQL: Kysely's
  // connection provider and driver layers made about 5 KB of garbage per create, and on
  // PGlite every scavenge is a pause of the loop the calls' signaling shares (bench/README.md).
  // The worker prepares each text once (pglite-statements.ts); the name is not needed.
  runStatementsWith(db, async (_name, text, parameters) => (await channel.query(channel.connection(), text, parameters)).rows);
  return {
    db,
    withScriptRunner: (fn) =>
      fn({
        exec: (script) => channel.exec(script),
        names: async (query) => (await channel.query(channel.connection(), query, [])).rows.map((r) => (r as { name: string }).name),
      }),
    kind: 'pglite',
    ping: async () => {
      await sql`select 1`.execute(db);
    },
  };
}

/** The main process's embedded database from the calls process (remote-pglite.ts); closing it only lets go. */
export function openRemotePGlite(remote: RemotePGlite): DatabaseHandle {
  return { ...overChannel(remote), description: 'PGlite (through the main process)', close: () => remote.close() };
}

/**
 * dataDir null = in memory (tests). PGlite runs in a worker thread (pglite-thread.ts): off the event loop that serves HTTP and signaling.
 * options.loadDataDir: start from this dumped data directory (a tarball of PGlite's dumpDataDir) instead of a new one (the tests' migrated copy).
 */
export async function openPGlite(dataDir: string | null, options: { loadDataDir?: string } = {}): Promise<DatabaseHandle> {
  let unlock = () => {};
  if (dataDir !== null) {
    fs.mkdirSync(dataDir, { recursive: true });
    unlock = lockDataDir(dataDir);
  }
  try {
    const thread = await PGliteThread.open(dataDir === null ? null : path.join(dataDir, 'pglite'), options);
    return {
      ...overChannel(thread),
      thread,
      description: dataDir === null ? 'PGlite (in memory)' : `PGlite ${dataDir}`,
      close: async () => {
        // The worker flushes and closes PGlite, then ends: an open one would keep the process alive.
        await thread.close();
        unlock();
      },
    };
  } catch (error) {
    unlock();
    throw error;
  }
}

export function openDatabase(config: { databaseUrl: string | null; dataDir: string; databasePoolSize: number; databasePreparedStatements: boolean }) {
  return config.databaseUrl
    ? openPostgres(config.databaseUrl, config.databasePoolSize, config.databasePreparedStatements)
    : openPGlite(config.dataDir);
}

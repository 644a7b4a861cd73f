// The embedded database's autovacuum and checkpoints (embedded-maintenance.ts).
// PGlite only: PostgreSQL's own background workers do this there, and its
// statistics come from many connections, each reporting on its own schedule.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, testDb } from '../../test/helpers/database.js';
import type { Db } from './client.js';
import { maintainEmbedded, tablesDue } from './embedded-maintenance.js';

describe.skipIf(testDb !== 'pglite')('the embedded database maintenance', () => {
  let database: Awaited<ReturnType<typeof openTestDatabase>>;
  let db: Db;

  beforeAll(async () => {
    database = await openTestDatabase();
    db = database.db;
    // Whatever the migrations left to do first, so that each test sees only its own table.
    await maintainEmbedded(db);
  });
  afterAll(() => database.close());

  const pages = async (table: string) =>
    Number((await sql<{ pages: number }>`select pg_relation_size(${table}::regclass) / 8192 as pages`.execute(db)).rows[0]!.pages);
  const stats = async (table: string) =>
    (
      await sql<{ last_vacuum: Date | null; last_analyze: Date | null; n_dead_tup: number }>`
        select last_vacuum, last_analyze, n_dead_tup::int from pg_stat_user_tables where relname = ${table}`.execute(db)
    ).rows[0]!;
  /** 500 rows in, and all but the newest 50 out again, as messages through an outbox. */
  const churn = async (table: string) => {
    await sql`insert into ${sql.table(table)} (body) select repeat('x', 200) from generate_series(1, 500)`.execute(db);
    await sql`delete from ${sql.table(table)} where id <= (select max(id) - 50 from ${sql.table(table)})`.execute(db);
  };

  it('vacuums and analyzes a table past the thresholds, and then leaves it alone', async () => {
    await sql`create table grown (id bigint generated always as identity primary key, body text not null)`.execute(db);
    await sql`insert into grown (body) select 'x' from generate_series(1, 2000)`.execute(db);
    expect(await tablesDue(db)).toEqual([{ table: 'grown', vacuum: true, analyze: true }]);

    expect(await maintainEmbedded(db)).toEqual(['vacuum (analyze) grown']);
    const after = await stats('grown');
    expect(after.last_vacuum).not.toBeNull();
    expect(after.last_analyze).not.toBeNull();
    // The planner has statistics now: its estimate is the table's size, not a guess.
    const plan = (await sql<{ 'QUERY PLAN': string }>`explain select * from grown`.execute(db)).rows[0]!['QUERY PLAN'];
    expect(plan).toMatch(/rows=2000 /);
    expect(await maintainEmbedded(db)).toEqual([]);

    // A few changes stay below the thresholds (50 + 20 % of 2,000 dead rows for VACUUM, 50 + 10 % changes for ANALYZE).
    await sql`delete from grown where id <= 40`.execute(db);
    expect(await tablesDue(db)).toEqual([]);
    // Most rows deleted: their space is freed, and the empty pages at the end go back to the disk.
    const before = await pages('grown');
    await sql`delete from grown where id > 100`.execute(db);
    expect(await maintainEmbedded(db)).toEqual(['vacuum (analyze) grown']);
    expect((await stats('grown')).n_dead_tup).toBe(0);
    expect(await pages('grown')).toBeLessThan(before);
  });

  it('keeps a table that rows go through (an outbox) at its size, where without it the table grows with every round', async () => {
    await sql`create table kept (id bigint generated always as identity primary key, body text not null)`.execute(db);
    await sql`create table unkept (id bigint generated always as identity primary key, body text not null)`.execute(db);
    for (let round = 0; round < 8; round++) await churn('unkept');
    // Measured before any run of the job, which from now on vacuums it too.
    const unkept = await pages('unkept');
    for (let round = 0; round < 8; round++) {
      await churn('kept');
      await maintainEmbedded(db);
    }
    // 500 rows of ~230 bytes fill about 15 pages: kept reuses the freed ones, unkept takes new ones every round.
    expect(await pages('kept')).toBeLessThanOrEqual(2 * 16);
    expect(unkept).toBeGreaterThan(8 * 14);
  });

  it('checkpoints once the WAL since the last checkpoint has grown past the bound, and not before', async () => {
    const walSinceCheckpoint = async () =>
      Number((await sql<{ bytes: string }>`select pg_current_wal_lsn() - redo_lsn as bytes from pg_control_checkpoint()`.execute(db)).rows[0]!.bytes);
    await maintainEmbedded(db, { checkpointAfterBytes: 0 });
    await sql`create table logged (id bigint generated always as identity primary key, body text not null)`.execute(db);
    await sql`insert into logged (body) select repeat('x', 200) from generate_series(1, 5000)`.execute(db);
    const written = await walSinceCheckpoint();
    expect(written).toBeGreaterThan(1_000_000);
    expect(await maintainEmbedded(db, { checkpointAfterBytes: written * 2 })).not.toContain('checkpoint');
    expect(await maintainEmbedded(db, { checkpointAfterBytes: 1_000_000 })).toContain('checkpoint');
    expect(await walSinceCheckpoint()).toBeLessThan(10_000);
  });
});

// Prepared statements keep their rows' shape between executions (src/db/shaped-query.ts):
// their rows must be exactly what pg's own Query gives, every time, and a
// statement whose columns change must read the new columns. A connection that
// has seen a named statement's rows described runs it without Describe.
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { prepare } from '../../src/db/prepared.js';
import { createPostgresDatabase, testDb } from '../helpers/database.js';

interface Shaped {
  id: number;
  day: string | null;
  at: Date | null;
  tags: string[] | null;
  ok: boolean | null;
  u: string | null;
  j: unknown;
  n: string | null;
}

describe.skipIf(testDb !== 'postgres')('prepared statements with a kept row shape', () => {
  let database: { url: string; drop: () => Promise<void> };
  let named: DatabaseHandle;
  let unnamed: DatabaseHandle;

  beforeAll(async () => {
    database = await createPostgresDatabase();
    named = await openPostgres(database.url, 2);
    unnamed = await openPostgres(database.url, 2, false);
    await sql`create table shaped (id int8 primary key, day date, at timestamptz, tags text[], ok boolean, u uuid, j jsonb, n text)`.execute(named.db);
    await sql`insert into shaped values
      (1, '2030-03-10', '2030-03-10T14:00:00.123Z', '{a,"b c"}', true, 'e23f9370-d5eb-4e66-887b-78d671cf7afe', '{"k": [1, 2]}', 'x'),
      (2, null, null, null, null, null, null, null),
      (9007199254740991, '1999-12-31', '1970-01-01T00:00:00Z', '{}', false, '00000000-0000-0000-0000-000000000000', 'null', '')`.execute(named.db);
  });
  afterAll(async () => {
    await named?.close();
    await unnamed?.close();
    await database?.drop();
  });

  it("gives pg's own rows, types included, on every execution and every connection", async () => {
    const db = named.db.withTables<{ shaped: Shaped }>();
    const find = prepare(db, ({ from }: { from: number }) => db.selectFrom('shaped').selectAll().where('id', '>=', from).orderBy('id'));
    const expected = (await sql<Shaped>`select * from shaped where id >= ${0} order by id`.execute(named.db)).rows;
    expect(expected).toHaveLength(3);
    expect(expected[0]!.at).toBeInstanceOf(Date);
    expect(expected[2]!.id).toBe(9007199254740991);
    expect(expected[0]!.day).toBe('2030-03-10');
    // More executions than connections, some at once: every connection prepares it and then reuses the shape.
    const runs = await Promise.all(Array.from({ length: 6 }, () => find({ from: 0 })));
    for (const rows of runs) expect(rows).toEqual(expected);
    for (const rows of [await find({ from: 0 }), await find({ from: 0 })]) expect(rows).toEqual(expected);
    expect(await find({ from: 3 })).toEqual([expected[2]]);
    // Rows are separate objects: changing one changes no other execution's.
    const [first] = await find({ from: 0 });
    first!.n = 'changed';
    expect((await find({ from: 0 }))[0]!.n).toBe('x');
  });

  it('asks each connection to describe a named statement once, and gives the same rows without it', async () => {
    const db = named.db.withTables<{ shaped: Shaped }>();
    const find = prepare(db, ({ from }: { from: number }) => db.selectFrom('shaped').select(['id', 'day', 'at', 'tags', 'n']).where('id', '>=', from).orderBy('id'));
    const expected = (await sql`select id, day, at, tags, n from shaped where id >= ${1} order by id`.execute(named.db)).rows;
    const describes = vi.spyOn(pg.Connection.prototype, 'describe');
    try {
      // Both connections of the pool in use at once, then one after the other, several times.
      for (let round = 0; round < 3; round++) {
        for (const rows of await Promise.all([find({ from: 1 }), find({ from: 1 }), find({ from: 1 })])) expect(rows).toEqual(expected);
        expect(await find({ from: 1 })).toEqual(expected);
      }
      // 12 executions, at most one Describe per connection.
      expect(describes.mock.calls.length).toBeGreaterThan(0);
      expect(describes.mock.calls.length).toBeLessThanOrEqual(2);
    } finally {
      describes.mockRestore();
    }
  });

  it('a failed execution without Describe gives its error and leaves the statement usable', async () => {
    await sql`create table unique_names (name text primary key, at timestamptz not null)`.execute(named.db);
    const db = named.db.withTables<{ unique_names: { name: string; at: Date } }>();
    const add = prepare(db, ({ name }: { name: string }) => db.insertInto('unique_names').values({ name, at: new Date('2030-01-01T00:00:00Z') }).returning(['name', 'at']));
    // Enough calls for both connections to have described it.
    for (const name of ['a', 'b', 'c', 'd']) expect(await add({ name })).toEqual([{ name, at: new Date('2030-01-01T00:00:00Z') }]);
    for (let i = 0; i < 2; i++) await expect(add({ name: 'a' })).rejects.toMatchObject({ code: '23505' });
    expect(await add({ name: 'e' })).toEqual([{ name: 'e', at: new Date('2030-01-01T00:00:00Z') }]);
  });

  it("refuses, never misreads, a named statement whose column's type changed under it", async () => {
    await sql`create table retyped (id int8 primary key, v int4)`.execute(named.db);
    await sql`insert into retyped values (1, 42)`.execute(named.db);
    const db = named.db.withTables<{ retyped: { id: number; v: number | string } }>();
    const read = prepare(db, ({ id }: { id: number }) => db.selectFrom('retyped').select(['id', 'v']).where('id', '=', id));
    // Both connections of the pool prepare and describe it.
    for (let i = 0; i < 2; i++) for (const rows of await Promise.all([read({ id: 1 }), read({ id: 1 }), read({ id: 1 })])) expect(rows).toEqual([{ id: 1, v: 42 }]);
    await sql`alter table retyped alter column v type text`.execute(named.db);
    // Each connection's statement was prepared with v an integer: PostgreSQL refuses it ("cached plan must not change result type").
    for (const outcome of await Promise.allSettled([read({ id: 1 }), read({ id: 1 }), read({ id: 1 })])) {
      expect(outcome).toMatchObject({ status: 'rejected', reason: { code: '0A000' } });
    }
  });

  it("reads a column's new type on the connections a pool opens after it changed", async () => {
    const own = await openPostgres(database.url, 2);
    try {
      await sql`create table reopened (id int8 primary key, v int4)`.execute(own.db);
      await sql`insert into reopened values (1, 42)`.execute(own.db);
      const db = own.db.withTables<{ reopened: { id: number; v: number | string } }>();
      const read = prepare(db, ({ id }: { id: number }) => db.selectFrom('reopened').select(['id', 'v']).where('id', '=', id));
      // Both connections of the pool prepare and describe it: v an integer.
      for (let i = 0; i < 2; i++) for (const rows of await Promise.all([read({ id: 1 }), read({ id: 1 })])) expect(rows).toEqual([{ id: 1, v: 42 }]);
      await sql`alter table reopened alter column v type text`.execute(own.db);
      // Their connections end (a restart, a pooler's recycling): the pool opens new ones.
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      try {
        const ended = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'`);
        expect(ended.rowCount).toBeGreaterThanOrEqual(2);
      } finally {
        await admin.end();
      }
      // The pool drops the ended connections as it hears of their end; the next statement goes to a new one.
      const fresh = async () => {
        // A generous deadline: the pool hears of the ends in milliseconds, more on a loaded machine.
        const deadline = Date.now() + 15_000;
        for (;;) {
          try {
            return await read({ id: 1 });
          } catch (error) {
            if (Date.now() > deadline) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      };
      // The new connection describes the statement; read with the shape the pool kept from before, v would be the integer it was: 42, not '42'.
      expect(await fresh()).toEqual([{ id: 1, v: '42' }]);
    } finally {
      await own.close();
    }
  });

  it('reads the new columns when a statement returns other columns than before', async () => {
    await sql`create table widening (id int8)`.execute(unnamed.db);
    await sql`insert into widening values (1)`.execute(unnamed.db);
    const db = unnamed.db.withTables<{ widening: { id: number; label?: string } }>();
    const all = prepare(db, ({ from }: { from: number }) => db.selectFrom('widening').selectAll().where('id', '>=', from));
    expect(await all({ from: 0 })).toEqual([{ id: 1 }]);
    await sql`alter table widening add column label text default 'new'`.execute(unnamed.db);
    expect(await all({ from: 0 })).toEqual([{ id: 1, label: 'new' }]);
  });
});

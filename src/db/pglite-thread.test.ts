// PGlite in its worker thread, through the same handle the app uses
// (openPGlite): errors keep the fields the error mapping reads, a transaction
// is not interleaved with another connection's statements, and close() ends
// the thread and releases the data directory; statements are parsed once,
// under a name (pglite-statements.ts), and parsed again when stale.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../http/error-handler.js';
import { openPGlite, type DatabaseHandle } from './client.js';

let handle: DatabaseHandle;

beforeAll(async () => {
  handle = await openPGlite(null);
  await handle.withScriptRunner((runner) =>
    runner.exec(`
      create table items (id int8 primary key, name text constraint items_name_key unique, day date);
      create table trail (n serial primary key, what text not null);
    `),
  );
});

afterAll(() => handle?.close());

describe('PGlite in a worker thread', () => {
  it('runs at a lower priority than the event loop (Linux: a nice value per thread)', () => {
    const niceOf = (thread: string) => Number(fs.readFileSync(`/proc/self/task/${thread}/stat`, 'utf8').replace(/^.*\) /, '').split(' ')[16]);
    const main = niceOf(String(process.pid));
    // The database's thread is lowered to 10; the main thread (its id is the process's) keeps its own.
    expect(fs.readdirSync('/proc/self/task').map(niceOf)).toContain(10);
    expect(main).toBeLessThan(10);
  });

  it('gives back rows with int8 as numbers and dates as text, and the affected row count', async () => {
    const inserted = await sql`insert into items values (${9007199254740991}, 'a', '2030-03-10')`.execute(handle.db);
    expect(inserted.numAffectedRows).toBe(1n);
    const { rows } = await sql<{ id: number; day: string; at: Date }>`select id, day, now() as at from items`.execute(handle.db);
    expect(rows).toEqual([{ id: 9007199254740991, day: '2030-03-10', at: expect.any(Date) }]);
  });

  it('throws Errors with their code, constraint and severity', async () => {
    await sql`insert into items (id, name) values (1, 'dup')`.execute(handle.db);
    const error = await sql`insert into items (id, name) values (2, 'dup')`.execute(handle.db).then(
      () => null,
      (e: unknown) => e as Error & Record<string, unknown>,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ code: '23505', constraint: 'items_name_key', severity: 'ERROR', table: 'items' });
    expect(error!.message).toContain('items_name_key');
    expect(isDatabaseUnavailable(error)).toBe(false);
  });

  it('runs a transaction alone: a concurrent statement waits until it commits', async () => {
    let releaseTransaction!: () => void;
    const held = new Promise<void>((resolve) => (releaseTransaction = resolve));
    let inside!: () => void;
    const started = new Promise<void>((resolve) => (inside = resolve));
    const transaction = handle.db.transaction().execute(async (trx) => {
      await sql`insert into trail (what) values ('tx 1')`.execute(trx);
      inside();
      await held;
      await sql`insert into trail (what) values ('tx 2')`.execute(trx);
    });
    await started;
    // Sent while the transaction is open, between its two statements.
    const outside = sql`insert into trail (what) values ('outside')`.execute(handle.db);
    // Proves that nothing happens: the outside statement does not run in the middle of the transaction
    // (a wait for its absence, so a fixed one; on a stalled machine it proves less, never fails wrongly).
    await new Promise((resolve) => setTimeout(resolve, 50));
    releaseTransaction();
    await Promise.all([transaction, outside]);
    const { rows } = await sql<{ what: string }>`select what from trail order by n`.execute(handle.db);
    expect(rows.map((r) => r.what)).toEqual(['tx 1', 'tx 2', 'outside']);
  });

  it('rolls back a failed transaction and keeps serving', async () => {
    await expect(
      handle.db.transaction().execute(async (trx) => {
        await sql`insert into trail (what) values ('rolled back')`.execute(trx);
        await sql`select nope`.execute(trx);
      }),
    ).rejects.toMatchObject({ code: '42703' });
    const { rows } = await sql<{ n: number }>`select count(*)::int8 as n from trail where what = 'rolled back'`.execute(handle.db);
    expect(rows[0]!.n).toBe(0);
  });

  it("runs multi-statement scripts and fails them with the failing statement's code", async () => {
    await handle.withScriptRunner(async (runner) => {
      await runner.exec(`insert into trail (what) values ('s1'); insert into trail (what) values ('s2');`);
      expect(await runner.names(`select what as name from trail where what like 's_' order by n`)).toEqual(['s1', 's2']);
      await expect(runner.exec('select 1; select nope;')).rejects.toMatchObject({ code: '42703' });
    });
  });
});

describe('named statements', () => {
  const prepared = async (text: string) =>
    (await sql<{ n: number }>`select count(*)::int8 as n from pg_prepared_statements where statement = ${text}`.execute(handle.db)).rows[0]!.n;

  it('parses a statement once and runs it again by its name, with new parameters', async () => {
    const text = 'select $1::int8 + 1 as next';
    const next = async (n: number) => (await sql<{ next: number }>`select ${n}::int8 + 1 as next`.execute(handle.db)).rows[0]!.next;
    expect(await next(1)).toBe(2);
    expect(await next(41)).toBe(42);
    expect(await prepared(text)).toBe(1);
  });

  it('serializes parameters as PGlite does: bytes, arrays, times, JSON, null', async () => {
    const at = new Date('2030-03-10T14:00:00.123Z');
    const { rows } = await sql<{ b: string; a: string[]; t: Date; j: unknown; z: null }>`select encode(${Buffer.from([0, 255, 16])}::bytea, 'hex') as b, ${['x', 'y,z']}::text[] as a, ${at}::timestamptz as t, ${JSON.stringify({ k: [1] })}::jsonb as j, ${null}::text as z`.execute(handle.db);
    expect(rows).toEqual([{ b: '00ff10', a: ['x', 'y,z'], t: at, j: { k: [1] }, z: null }]);
  });

  it('reads rows by the description of the first successful execution, also for statements that return none', async () => {
    const add = (id: number, name: string) => sql<{ id: number; name: string; day: string | null }>`insert into items (id, name) values (${id}, ${name}) returning id, name, day`.execute(handle.db);
    await add(700, 'first');
    // The statement's first execution fails: the next successful one still describes its rows.
    const clash = (id: number) => sql<{ id: number; day: string | null }>`insert into items (id, name) values (${id}, 'first') returning id, day`.execute(handle.db);
    await expect(clash(701)).rejects.toMatchObject({ code: '23505' });
    await sql`delete from items where id = 700`.execute(handle.db);
    expect((await clash(702)).rows).toEqual([{ id: 702, day: null }]);
    await expect(clash(703)).rejects.toMatchObject({ code: '23505' });
    await sql`delete from items where id = 702`.execute(handle.db);
    expect((await clash(704)).rows).toEqual([{ id: 704, day: null }]);
    for (const [id, name] of [[705, 'b'], [706, 'c']] as const) expect((await add(id, name)).rows).toEqual([{ id, name, day: null }]);
    // No rows: the affected count only, every time.
    const rename = (from: string) => sql`update items set name = name || '!' where name = ${from}`.execute(handle.db);
    for (const from of ['b', 'c', 'nobody']) expect(Number((await rename(from)).numAffectedRows)).toBe(from === 'nobody' ? 0 : 1);
  });

  it('parses again a statement whose table changed shape, or that was deallocated', async () => {
    await handle.withScriptRunner((runner) => runner.exec('create table shaped (a int)'));
    const read = () => sql<Record<string, unknown>>`select * from shaped where ${1}::int = 1`.execute(handle.db);
    await sql`insert into shaped values (1)`.execute(handle.db);
    expect((await read()).rows).toEqual([{ a: 1 }]);
    await handle.withScriptRunner((runner) => runner.exec('alter table shaped add column b text'));
    expect((await read()).rows).toEqual([{ a: 1, b: null }]);
    await handle.withScriptRunner((runner) => runner.exec('deallocate all'));
    expect((await read()).rows).toEqual([{ a: 1, b: null }]);
  });

  it('keeps at most 500 statements, the least recently used closed first', { timeout: 60_000 }, async () => {
    const kept = () => sql<{ n: number }>`select count(*)::int8 as n from pg_prepared_statements`.execute(handle.db);
    const first = 'select $1::int as v, 0 as k';
    await sql`select ${1}::int as v, 0 as k`.execute(handle.db);
    for (let k = 1; k <= 520; k++) await sql`select ${1}::int as v, ${sql.lit(k)} as k`.execute(handle.db);
    expect((await kept()).rows[0]!.n).toBeLessThanOrEqual(500);
    expect(await prepared(first)).toBe(0);
    expect(await prepared('select $1::int as v, 520 as k')).toBe(1);
  });
});

describe('close', () => {
  it('ends the thread and releases the data directory to another process', { timeout: 150_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-pglite-thread-'));
    try {
      const first = await openPGlite(dataDir);
      await first.withScriptRunner((runner) => runner.exec(`create table kept (v text); insert into kept values ('written before close');`));
      // Another process cannot open it while this one holds it.
      const probe = `import { openPGlite } from './src/db/client.ts';
        const h = await openPGlite(${JSON.stringify(dataDir)});
        const rows = await h.db.selectFrom('kept').selectAll().execute();
        console.log(JSON.stringify(rows));
        await h.close();`;
      const run = () => promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', probe], { cwd: path.resolve(import.meta.dirname, '../..'), timeout: 70_000 });
      await expect(run()).rejects.toMatchObject({ stderr: expect.stringContaining('in use by another Parley process') });
      await first.close();
      expect(fs.existsSync(path.join(dataDir, 'parley.lock'))).toBe(false);
      await expect(sql`select 1`.execute(first.db)).rejects.toThrow(/closed/);
      const { stdout } = await run();
      expect(JSON.parse(stdout.trim())).toEqual([{ v: 'written before close' }]);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

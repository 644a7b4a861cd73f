// The functions that triggers run, and the helpers they call, are PL/pgSQL
// (src/db/migrations/0008_plpgsql_trigger_helpers.sql): a LANGUAGE sql
// function called from PL/pgSQL is parsed and planned again on every call,
// which cost a room event with an endpoint 200–420 µs and every room create
// 45 µs (bench/README.md). Checked on the migrated schema of both databases.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../helpers/app.js';

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestContext();
});
afterAll(() => ctx.close());

describe('trigger functions', () => {
  it('every function of the public schema is PL/pgSQL, so that none is planned again per call', async () => {
    const { rows } = await sql<{ name: string; language: string }>`
      select p.proname as name, l.lanname as language
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace join pg_language l on l.oid = p.prolang
       where n.nspname = 'public' order by 1`.execute(ctx.services.database.db);
    // The triggers' functions and their helpers, by name: a rename must come here too.
    expect(rows.map((row) => row.name)).toEqual(
      expect.arrayContaining(['participants_webhook_event', 'rooms_count_change', 'rooms_count_deleted', 'rooms_webhook_event', 'webhook_enqueue']),
    );
    expect(rows.filter((row) => row.language !== 'plpgsql')).toEqual([]);
  });
});

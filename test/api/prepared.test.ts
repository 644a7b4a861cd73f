// db/prepared.ts: a statement built once runs with each call's own values, in
// their places, next to the constants the builder wrote into it.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle, type Db } from '../../src/db/client.js';
import { prepare } from '../../src/db/prepared.js';
import { openTestDatabase, testDb } from '../helpers/database.js';

let database: DatabaseHandle & { url: string | null };

beforeAll(async () => {
  database = await openTestDatabase();
  const { db } = database;
  await db
    .insertInto('tenants')
    .values([
      { id: '00000000-0000-4000-8000-000000000001', name: 'Alpha', default_return_url: 'https://a.example', timezone: 'UTC', created_at: new Date() },
      { id: '00000000-0000-4000-8000-000000000002', name: 'Beta', default_return_url: 'https://b.example', timezone: 'Europe/Paris', created_at: new Date() },
    ])
    .execute();
});

afterAll(async () => {
  await database?.close();
});

describe('prepare', () => {
  it('builds once and puts every call’s values in their places, around constants', async () => {
    const { db } = database;
    let builds = 0;
    const find = prepare(db, ({ name, zone }: { name: string; zone: string | null }) => {
      builds += 1;
      return db
        .selectFrom('tenants')
        .select(['id', 'name'])
        // A constant between the two arguments: it must stay where the builder put it.
        .select(sql<string>`${'constant'}::text`.as('label'))
        .where('name', '=', name)
        .where((eb) => eb.or([eb('timezone', '=', zone), sql<boolean>`${zone}::text is null`]));
    });

    expect(await find({ name: 'Alpha', zone: 'UTC' })).toEqual([{ id: '00000000-0000-4000-8000-000000000001', name: 'Alpha', label: 'constant' }]);
    expect(await find({ name: 'Beta', zone: 'Europe/Paris' })).toEqual([{ id: '00000000-0000-4000-8000-000000000002', name: 'Beta', label: 'constant' }]);
    // null is a value like any other; the second call's values do not leak into the third.
    expect(await find({ name: 'Beta', zone: null })).toHaveLength(1);
    expect(await find({ name: 'Beta', zone: 'UTC' })).toEqual([]);
    expect(builds).toBe(1);
  });

  it('uses the same argument wherever the builder used it', async () => {
    const { db } = database;
    const both = prepare(db, ({ name }: { name: string }) =>
      db.selectFrom('tenants').select('id').where('name', '=', name).where(sql<boolean>`length(${name}) = 4`),
    );
    expect(await both({ name: 'Beta' })).toEqual([{ id: '00000000-0000-4000-8000-000000000002' }]);
    expect(await both({ name: 'Alpha' })).toEqual([]);
  });

  it('takes its values from several argument objects, each by its own names', async () => {
    const { db } = database;
    // The same name in both objects: each stand-in reads its own object.
    const find = prepare(db, (first: { name: string }, second: { name: string; zone: string }) =>
      db
        .selectFrom('tenants')
        .select('id')
        .where((eb) => eb.or([eb('name', '=', first.name), eb('name', '=', second.name)]))
        .where('timezone', '=', second.zone)
        .orderBy('id'),
    );
    expect(await find({ name: 'Alpha' }, { name: 'Beta', zone: 'Europe/Paris' })).toEqual([{ id: '00000000-0000-4000-8000-000000000002' }]);
    expect(await find({ name: 'Alpha' }, { name: 'Beta', zone: 'UTC' })).toEqual([{ id: '00000000-0000-4000-8000-000000000001' }]);
    expect(await find({ name: 'Gamma' }, { name: 'Alpha', zone: 'Europe/Paris' })).toEqual([]);
  });
});

// On PostgreSQL each compiled statement is a named one (client.ts): parsed and
// planned once per connection. One connection per handle here, so the test sees
// the statements its own queries prepared.
describe.skipIf(testDb !== 'postgres')('named statements on PostgreSQL', () => {
  /** Runs `use` on a database handle of one connection, closed afterwards. */
  const onOneConnection = async (preparedStatements: boolean, use: (db: Db) => Promise<void>) => {
    const handle = await openPostgres(database.url!, 1, preparedStatements);
    try {
      await use(handle.db);
    } finally {
      await handle.close();
    }
  };
  const preparedOn = (db: Db) =>
    sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements`.execute(db).then((r) => r.rows);

  it('prepares a compiled statement once on the connection and runs it by name after that', async () => {
    await onOneConnection(true, async (db) => {
      const find = prepare(db, ({ name }: { name: string }) => db.selectFrom('tenants').select(['id', 'name']).where('name', '=', name));
      expect(await find({ name: 'Alpha' })).toHaveLength(1);
      expect(await find({ name: 'Beta' })).toHaveLength(1);
      const compiled = db.selectFrom('tenants').select(['id', 'name']).where('name', '=', 'x').compile().sql;
      const prepared = await preparedOn(db);
      expect(prepared).toEqual([{ name: expect.stringMatching(/^parley_\d+$/), statement: compiled }]);
      // Anything else stays unnamed.
      await db.selectFrom('tenants').select('timezone').where('name', '=', 'Alpha').execute();
      expect(await preparedOn(db)).toHaveLength(1);
    });
  });

  it('keeps the generic plan of a named statement from its first run, also where a custom plan looks cheaper', async () => {
    await onOneConnection(true, async (db) => {
      // The token lookup's shape: for a one-element array a custom plan is estimated cheaper than
      // the generic plan's ten elements, so PostgreSQL's default planned it again on every call.
      const find = prepare(db, ({ names }: { names: string[] }) =>
        db.selectFrom('tenants').select(['id']).where('name', '=', sql<string>`any(${names}::text[])`),
      );
      for (let i = 0; i < 8; i++) expect(await find({ names: ['Alpha'] })).toHaveLength(1);
      const plans = await sql<{ generic_plans: number; custom_plans: number }>`
        select generic_plans::int, custom_plans::int from pg_prepared_statements`.execute(db);
      expect(plans.rows).toEqual([{ generic_plans: 8, custom_plans: 0 }]);
    });
  });

  it('keeps working when a migration adds a column: the statement names its columns', async () => {
    await onOneConnection(true, async (db) => {
      await sql`create table scratch_rooms (id int primary key, name text not null)`.execute(db);
      await sql`insert into scratch_rooms values (1, 'one')`.execute(db);
      const scratch = db.withTables<{ scratch_rooms: { id: number; name: string } }>();
      const named = prepare(scratch, ({ id }: { id: number }) => scratch.selectFrom('scratch_rooms').select(['id', 'name']).where('id', '=', id));
      const star = prepare(scratch, ({ id }: { id: number }) => scratch.selectFrom('scratch_rooms').selectAll().where('id', '=', id));
      expect(await named({ id: 1 })).toEqual([{ id: 1, name: 'one' }]);
      expect(await star({ id: 1 })).toEqual([{ id: 1, name: 'one' }]);

      await sql`alter table scratch_rooms add column extra text`.execute(db);
      expect(await named({ id: 1 })).toEqual([{ id: 1, name: 'one' }]);
      // Why: PostgreSQL refuses a prepared `*` whose columns changed under it.
      await expect(star({ id: 1 })).rejects.toThrow(/cached plan must not change result type/);
    });
  });

  it('prepares nothing with DATABASE_PREPARED_STATEMENTS off', async () => {
    await onOneConnection(false, async (db) => {
      const find = prepare(db, ({ name }: { name: string }) => db.selectFrom('tenants').select(['id', 'name']).where('name', '=', name));
      expect(await find({ name: 'Alpha' })).toHaveLength(1);
      expect(await preparedOn(db)).toEqual([]);
    });
  });
});

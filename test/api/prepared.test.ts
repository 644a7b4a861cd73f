// db/prepared.ts: a statement built once runs with each call's own values, in
// their places, next to the constants the builder wrote into it.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.js';
import { prepare } from '../../src/db/prepared.js';
import { openTestDatabase } from '../helpers/database.js';

let database: DatabaseHandle;

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
});

// The embedded database reached from another process (the calls process):
// here both sides in one process over the real worker thread, the IPC left
// out. Rows and errors come back as they would in process, and a transaction
// the other side leaves open (it died) is rolled back instead of holding the
// database for ever.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGlite, openRemotePGlite, type DatabaseHandle } from './client.js';
import { RemotePGlite, serveRemoteStatements } from './remote-pglite.js';

let local: DatabaseHandle;
let remote: DatabaseHandle;
let served: ReturnType<typeof serveRemoteStatements>;

beforeAll(async () => {
  local = await openPGlite(null);
  await local.withScriptRunner((runner) => runner.exec('create table notes (id int8 primary key, body text not null)'));
  // Replies go back a turn later, as over IPC.
  const channel: RemotePGlite = new RemotePGlite((requests) => setImmediate(() => served.run(requests)));
  served = serveRemoteStatements(local.thread!, (reply) => setImmediate(() => channel.receive(reply)));
  remote = openRemotePGlite(channel);
});

afterAll(() => local?.close());

describe('PGlite from another process', () => {
  it('runs its statements on the same database, with the errors the error mapping reads', async () => {
    await sql`insert into notes values (1, 'from afar')`.execute(remote.db);
    expect((await sql<{ body: string }>`select body from notes where id = 1`.execute(local.db)).rows).toEqual([{ body: 'from afar' }]);
    await expect(sql`insert into notes values (1, 'again')`.execute(remote.db)).rejects.toMatchObject({ code: '23505', constraint: 'notes_pkey' });
  });

  it('keeps its transactions whole, and rolls back the one it left open when it went away', async () => {
    await remote.db.transaction().execute(async (trx) => {
      await sql`insert into notes values (2, 'committed')`.execute(trx);
    });
    // A transaction that never ends, as if its process died inside it.
    let inside!: () => void;
    const begun = new Promise<void>((resolve) => (inside = resolve));
    void remote.db.transaction().execute(async (trx) => {
      await sql`insert into notes values (3, 'never committed')`.execute(trx);
      inside();
      await new Promise(() => {});
    });
    // Waits for the transaction to be open (its insert done), not for a time that may take.
    await begun;
    const meanwhile = sql<{ id: number }>`select id from notes order by id`.execute(local.db);
    // The 200 ms prove that the statement waits (an absence: on a stalled machine it proves less, never fails wrongly).
    const waited = await Promise.race([meanwhile.then(() => 'ran'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 200))]);
    expect(waited).toBe('waiting');
    served.abandon();
    expect((await meanwhile).rows.map((r) => r.id)).toEqual([1, 2]);
  });
});

// The embedded database's autovacuum. PGlite runs PostgreSQL without its
// background workers, so nothing ever vacuums or analyzes it: every updated or
// deleted row (a PUT's old version, a delivered webhook message, a participant
// of a deleted room) stays on disk, the data directory grows with use and
// never shrinks, the planner has no statistics, and the transaction ids are
// never frozen. This job does autovacuum's work on PostgreSQL's own terms and
// thresholds: from the cumulative statistics, the tables that need it, one
// statement each (a table at a time, so an API request waits for one table's
// VACUUM at most, not the database's). On PostgreSQL autovacuum does this, and
// the job is not started (server.ts).
import { sql } from 'kysely';
import type { Db } from './client.js';

export interface TableMaintenance {
  table: string;
  vacuum: boolean;
  analyze: boolean;
}

/**
 * The tables that need a VACUUM or an ANALYZE now, by the statistics and
 * PostgreSQL's default thresholds (autovacuum_vacuum_threshold and
 * _scale_factor, the insert ones, autovacuum_analyze_*, and
 * vacuum_freeze_table_age): a table is vacuumed once its dead rows pass 50 +
 * 20 % of its live ones, or its inserts since the last VACUUM 1,000 + 20 %
 * (which marks pages all-visible and freezes them), or its oldest transaction
 * id is 150 million old (a VACUUM then freezes the whole table, before the ids
 * wrap around); analyzed once its changes since the last ANALYZE pass 50 + 10 %.
 */
export async function tablesDue(db: Db): Promise<TableMaintenance[]> {
  // PGlite reports a statement's counts to the statistics only now and then
  // (once a second at most, when its backend goes idle): ask for them now.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<TableMaintenance>`
    select s.relname as "table",
      s.n_dead_tup > 50 + 0.2 * s.n_live_tup
        or s.n_ins_since_vacuum > 1000 + 0.2 * s.n_live_tup
        or age(c.relfrozenxid) > 150000000 as "vacuum",
      s.n_mod_since_analyze > 50 + 0.1 * s.n_live_tup as "analyze"
    from pg_stat_user_tables s join pg_class c on c.oid = s.relid
    where s.schemaname = current_schema()
    order by s.relname`.execute(db);
  return rows.filter((row) => row.vacuum || row.analyze);
}

/** One run: VACUUM and/or ANALYZE of each table that needs it. The tables done. */
export async function maintainEmbedded(db: Db): Promise<TableMaintenance[]> {
  const due = await tablesDue(db);
  for (const { table, vacuum, analyze } of due) {
    const name = sql.table(table);
    // VACUUM cannot run in a transaction: each is a statement of its own.
    if (vacuum) await sql`vacuum ${analyze ? sql`(analyze) ` : sql``}${name}`.execute(db);
    else await sql`analyze ${name}`.execute(db);
  }
  return due;
}

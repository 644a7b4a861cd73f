// The embedded database's autovacuum and checkpointer. PGlite runs PostgreSQL
// without its background workers, so nothing ever vacuumed or analyzed it:
// every updated or deleted row (a PUT's old version, a delivered webhook
// message, a participant of a deleted room) stayed on disk, the data directory
// grew with use and never shrank, the planner had no statistics, and no
// transaction id was ever frozen. This job does autovacuum's work on
// PostgreSQL's own terms and thresholds: from the cumulative statistics, the
// tables that need it, one statement each (a table at a time, so an API
// request waits for one table's VACUUM at most, not the database's); and the
// checkpointer's (CHECKPOINT_AFTER_BYTES). On PostgreSQL its own background
// workers do this, and the job is not started (server.ts).
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

/**
 * PGlite has no checkpointer either: it checkpoints only when the WAL since
 * the last checkpoint reaches max_wal_size (1 GB), so its data directory
 * carries up to that much WAL, and a restart after a crash replays all of it.
 * A checkpoint once this much has been written keeps the WAL at about
 * min_wal_size (80 MB) plus this (measured: 101 MB, in 30–70 ms each).
 */
export const CHECKPOINT_AFTER_BYTES = 64 * 1024 * 1024;

/**
 * One run: VACUUM and/or ANALYZE of each table that needs it, then a
 * CHECKPOINT if the WAL since the last one has grown past `checkpointAfterBytes`.
 * The statements it ran.
 */
export async function maintainEmbedded(db: Db, { checkpointAfterBytes = CHECKPOINT_AFTER_BYTES } = {}): Promise<string[]> {
  const done: string[] = [];
  for (const { table, vacuum, analyze } of await tablesDue(db)) {
    // VACUUM cannot run in a transaction: each is a statement of its own.
    const statement = vacuum ? `vacuum${analyze ? ' (analyze)' : ''}` : 'analyze';
    await sql`${sql.raw(statement)} ${sql.table(table)}`.execute(db);
    done.push(`${statement} ${table}`);
  }
  const { rows } = await sql<{ bytes: string }>`select pg_current_wal_lsn() - redo_lsn as bytes from pg_control_checkpoint()`.execute(db);
  if (Number(rows[0]!.bytes) > checkpointAfterBytes) {
    await sql`checkpoint`.execute(db);
    done.push('checkpoint');
  }
  return done;
}

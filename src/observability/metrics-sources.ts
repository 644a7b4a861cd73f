// The database readings behind the cluster-wide gauges of metrics.ts.
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/client.js';
import type { MetricsSources } from './metrics.js';

export function metricsSources(database: DatabaseHandle): MetricsSources {
  const { db } = database;
  return {
    async roomsByStatus() {
      const rows = await sql<{ status: string; n: number }>`select status, count(*)::int as n from rooms group by status`.execute(db);
      return Object.fromEntries(rows.rows.map((r) => [r.status, Number(r.n)]));
    },
    async connectedParticipants() {
      const row = await sql<{ n: number }>`select count(*)::int as n from participants where left_at is null`.execute(db);
      return Number(row.rows[0]?.n ?? 0);
    },
    poolStats: database.poolStats,
  };
}

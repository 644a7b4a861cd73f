// Participant sessions in SQL (docs/design.md, "Participant sessions"): a room's participants while the
// room exists, then the copy the delete trigger keeps (0006), so that they
// outlive the room as feedback does. The network summary is computed here
// from the browser's reports: medians for round trip and bitrate (one bad
// moment does not dominate), the mean for loss, relayed when any report was.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import type { ParticipantRole } from '../../db/schema.js';
import { byToken, type TokenScope } from '../rooms/room-rows.repo.js';

export interface NetworkSummary {
  rtt_ms: number | null;
  loss_percent: number | null;
  bitrate_kbps: number | null;
  relayed: boolean | null;
  reports: number;
}

interface SessionRow {
  participant_token: string;
  role: ParticipantRole;
  display_name: string;
  joined_at: Date;
  left_at: Date | null;
  network: NetworkSummary | null;
}

/** The summary of a `network_reports` column, null when there are none. */
function summary(column: string): RawBuilder<NetworkSummary | null> {
  const reports = sql.ref(column);
  return sql<NetworkSummary | null>`(select case when count(*) = 0 then null else jsonb_build_object(
      'rtt_ms', round(percentile_cont(0.5) within group (order by (r->>'rtt')::float8))::int,
      'loss_percent', round(avg((r->>'loss')::float8)::numeric, 2),
      'bitrate_kbps', round(percentile_cont(0.5) within group (order by (r->>'kbps')::float8))::int,
      'relayed', bool_or((r->>'relayed')::boolean),
      'reports', count(*)) end
    from jsonb_array_elements(${reports}) r)`;
}

export function createSessionsRepo(db: Db) {
  return {
    /** The sessions of the room with this token in scope, oldest first; null when there is no such room, live or deleted. */
    async forRoom(scope: TokenScope, roomToken: string): Promise<SessionRow[] | null> {
      const found = await db.selectFrom('rooms').select('id').where(byToken(scope, roomToken)).executeTakeFirst();
      if (found) {
        return db
          .selectFrom('participants')
          .select(['token as participant_token', 'role', 'display_name', 'joined_at', 'left_at', summary('network_reports').as('network')])
          .where('room_id', '=', found.id)
          .orderBy('joined_at')
          .orderBy('token')
          .execute();
      }
      let kept = db
        .selectFrom('deleted_room_sessions')
        .select(['participant_token', 'role', 'display_name', 'joined_at', 'left_at', summary('network_reports').as('network')])
        .where('tenant_id', '=', scope.tenantId)
        .where('room_token', '=', roomToken);
      if (scope.organizationId !== null) kept = kept.where('organization_id', '=', scope.organizationId);
      const rows = await kept.orderBy('joined_at').orderBy('participant_token').execute();
      return rows.length ? rows : null;
    },
  };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;

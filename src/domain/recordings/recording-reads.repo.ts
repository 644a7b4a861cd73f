// What the API reads of recordings (docs/api.md, "Recordings"), under the
// room's scope rules: the tenant's, and for an Organization token only its
// organization's rooms. Anything out of scope is not found, as rooms are.
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { RecordingsTable } from '../../db/schema.js';

export interface ReadScope {
  tenantId: string;
  organizationId: string | null;
}

export type ScopedRecording = Pick<RecordingsTable, 'id' | 'room_id' | 'status' | 'started_by' | 'started_at' | 'ended_at' | 'duration_seconds' | 'size_bytes' | 'content_type'> & {
  room_token: string;
  tenant_id: string;
  organization_id: string | null;
};

export interface AuditRow {
  action: 'download' | 'delete';
  at: Date;
  token_id: string | null;
  token_label: string | null;
}

export function createRecordingReadsRepo(db: Db) {
  const inScope = (scope: ReadScope) =>
    db
      .selectFrom('recordings as r')
      .innerJoin('rooms', 'rooms.id', 'r.room_id')
      .select(['r.id', 'r.room_id', 'r.status', 'r.started_by', 'r.started_at', 'r.ended_at', 'r.duration_seconds', 'r.size_bytes', 'r.content_type', 'rooms.token as room_token', 'rooms.tenant_id', 'rooms.organization_id'])
      .where('rooms.tenant_id', '=', scope.tenantId)
      .where((eb) => eb.or([sql<boolean>`${scope.organizationId}::uuid is null`, eb('rooms.organization_id', '=', sql<string>`${scope.organizationId}::uuid`)]));

  const numbered = <T extends { room_id: number; size_bytes: number | null }>(row: T): T => ({
    ...row,
    room_id: Number(row.room_id),
    size_bytes: row.size_bytes === null ? null : Number(row.size_bytes),
  });

  return {
    /** The room's id when it is in scope. */
    async roomInScope(scope: ReadScope, roomToken: string): Promise<number | null> {
      const row = await db
        .selectFrom('rooms')
        .select('id')
        .where('token', '=', roomToken)
        .where('tenant_id', '=', scope.tenantId)
        .where((eb) => eb.or([sql<boolean>`${scope.organizationId}::uuid is null`, eb('organization_id', '=', sql<string>`${scope.organizationId}::uuid`)]))
        .executeTakeFirst();
      return row ? Number(row.id) : null;
    },

    /** A room's recordings, oldest first. */
    async ofRoom(scope: ReadScope, roomId: number): Promise<ScopedRecording[]> {
      const rows = await inScope(scope).where('r.room_id', '=', roomId).orderBy('r.started_at').orderBy('r.id').execute();
      return rows.map(numbered);
    },

    async find(scope: ReadScope, id: string): Promise<ScopedRecording | null> {
      const row = await inScope(scope).where('r.id', '=', id).executeTakeFirst();
      return row ? numbered(row) : null;
    },

    /** A download, in the audit list. */
    async downloaded(recording: ScopedRecording, tokenId: string, at: Date): Promise<void> {
      await db
        .insertInto('recording_audit')
        .values({ recording_id: recording.id, tenant_id: recording.tenant_id, organization_id: recording.organization_id, room_token: recording.room_token, action: 'download', token_id: tokenId, at })
        .execute();
    },

    /** The recording's audit list, oldest first; null when neither it nor any entry of it is in scope. */
    async audit(scope: ReadScope, recordingId: string): Promise<AuditRow[] | null> {
      const rows = await db
        .selectFrom('recording_audit as a')
        .leftJoin('api_tokens as t', 't.id', 'a.token_id')
        .select(['a.action', 'a.at', 'a.token_id', 't.label as token_label'])
        .where('a.recording_id', '=', recordingId)
        .where('a.tenant_id', '=', scope.tenantId)
        .where((eb) => eb.or([sql<boolean>`${scope.organizationId}::uuid is null`, eb('a.organization_id', '=', sql<string>`${scope.organizationId}::uuid`)]))
        .orderBy('a.id')
        .execute();
      if (rows.length > 0) return rows;
      return (await inScope(scope).where('r.id', '=', recordingId).executeTakeFirst()) ? [] : null;
    },
  };
}

export type RecordingReadsRepo = ReturnType<typeof createRecordingReadsRepo>;

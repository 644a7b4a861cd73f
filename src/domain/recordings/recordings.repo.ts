// Recordings in SQL (migration 0017; docs/design.md, "Recording with
// consent"): the writes of a recording's life, each with its webhook event in
// the same transaction, and the leases that keep a recording from being stuck.
// A claim is a short transaction of its own (FOR UPDATE SKIP LOCKED) that moves
// the lease forward, like the webhook outbox's: the work happens outside any
// transaction, and a node that dies lets its lease lapse.
import { sql, type Kysely } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Database, ParticipantRole, RecordingStatus, RecordingsTable } from '../../db/schema.js';
import { enqueueEvent, type RecordingEventData } from '../webhooks/webhook-events.js';

export interface ConsentRow {
  peer_id: string;
  display_name: string;
  role: ParticipantRole;
  accepted_at: Date;
}

export type RecordingRow = Omit<RecordingsTable, 'attempts'> & { attempts: number };

/** A recording with what the webhooks and the API name it by. */
export interface RecordingWithRoom extends RecordingRow {
  room_token: string;
  tenant_id: string;
  organization_id: string | null;
}

const COLUMNS = [
  'r.id',
  'r.room_id',
  'r.status',
  'r.started_by',
  'r.started_at',
  'r.ended_at',
  'r.duration_seconds',
  'r.size_bytes',
  'r.content_type',
  'r.lease_until',
  'r.attempts',
  'r.error',
  'rooms.token as room_token',
  'rooms.tenant_id',
  'rooms.organization_id',
] as const;

function withRoom(db: Kysely<Database>) {
  return db.selectFrom('recordings as r').innerJoin('rooms', 'rooms.id', 'r.room_id').select(COLUMNS);
}

const iso = (d: Date | null) => (d === null ? null : d.toISOString());

/** The webhook data of a recording (no secrets: the room's public token and the recording's id). */
export function eventData(row: RecordingWithRoom): RecordingEventData {
  const base = { room_token: row.room_token, recording_id: row.id, started_by: row.started_by, started_at: row.started_at.toISOString() };
  if (row.status === 'ready') {
    return { ...base, status: 'ready', ended_at: iso(row.ended_at), duration_seconds: row.duration_seconds, size_bytes: row.size_bytes, content_type: row.content_type };
  }
  if (row.status === 'failed') return { ...base, status: 'failed', ended_at: iso(row.ended_at), error: row.error ?? 'failed' };
  return { ...base, status: 'recording' };
}

/** A finished recording's outcome, written once the file is made or given up. */
export type Outcome =
  | { status: 'ready'; durationSeconds: number; sizeBytes: number; contentType: string }
  | { status: 'failed'; error: string };

export function createRecordingsRepo(db: Db) {
  async function find(executor: Kysely<Database>, id: string): Promise<RecordingWithRoom | null> {
    const row = await withRoom(executor).where('r.id', '=', id).executeTakeFirst();
    return row ? { ...row, attempts: Number(row.attempts) } : null;
  }

  return {
    find: (id: string) => find(db, id),

    /** The room's recording in progress, if any. */
    async active(roomId: number): Promise<RecordingWithRoom | null> {
      const row = await withRoom(db).where('r.room_id', '=', roomId).where('r.status', '=', 'recording').executeTakeFirst();
      return row ? { ...row, attempts: Number(row.attempts) } : null;
    },

    async consents(recordingIds: readonly string[]): Promise<(ConsentRow & { recording_id: string })[]> {
      if (recordingIds.length === 0) return [];
      return db
        .selectFrom('recording_consents')
        .select(['recording_id', 'peer_id', 'display_name', 'role', 'accepted_at'])
        .where('recording_id', 'in', recordingIds)
        .orderBy('accepted_at')
        .orderBy('peer_id')
        .execute();
    },

    /**
     * A new recording in `recording` with its consents and its
     * recording.started event; 'busy' when the room has one already (the
     * partial unique index decides, so two nodes starting at once get one),
     * 'disabled' when the room does not allow recording (or is gone).
     */
    async insert(
      fields: { id: string; roomId: number; startedBy: string; startedAt: Date; leaseUntil: Date },
      consents: ConsentRow[],
    ): Promise<RecordingWithRoom | 'busy' | 'disabled'> {
      return db.transaction().execute(async (tx) => {
        const inserted = await sql<{ id: string }>`
          insert into recordings (id, room_id, status, started_by, started_at, lease_until)
          select ${fields.id}, id, 'recording', ${fields.startedBy}, ${fields.startedAt}, ${fields.leaseUntil}
          from rooms where id = ${fields.roomId} and enable_recording
          on conflict (room_id) where status = 'recording' do nothing
          returning id`.execute(tx);
        if (inserted.rows.length === 0) {
          const room = await tx.selectFrom('rooms').select('enable_recording').where('id', '=', fields.roomId).executeTakeFirst();
          return room?.enable_recording ? 'busy' : 'disabled';
        }
        if (consents.length > 0) {
          await tx
            .insertInto('recording_consents')
            .values(consents.map((c) => ({ recording_id: fields.id, ...c })))
            .onConflict((oc) => oc.columns(['recording_id', 'peer_id']).doNothing())
            .execute();
        }
        const row = (await find(tx, fields.id))!;
        await enqueueEvent(tx, row.tenant_id, { type: 'recording.started', data: eventData(row) });
        return row;
      });
    },

    /** A consent given during the recording; false when it is not recording any more. */
    async addConsent(id: string, consent: ConsentRow): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const row = await tx.selectFrom('recordings').select('id').where('id', '=', id).where('status', '=', 'recording').forUpdate().executeTakeFirst();
        if (!row) return false;
        await tx
          .insertInto('recording_consents')
          .values({ recording_id: id, ...consent })
          .onConflict((oc) => oc.columns(['recording_id', 'peer_id']).doUpdateSet({ display_name: consent.display_name, role: consent.role, accepted_at: consent.accepted_at }))
          .execute();
        return true;
      });
    },

    /** The recording node's lease, moved on; false when it is not recording any more. */
    async renew(id: string, leaseUntil: Date): Promise<boolean> {
      const result = await db.updateTable('recordings').set({ lease_until: leaseUntil }).where('id', '=', id).where('status', '=', 'recording').executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** recording -> processing (due at once); the room id when it was recording, else null. */
    async stop(id: string, endedAt: Date): Promise<number | null> {
      const row = await db
        .updateTable('recordings')
        .set({ status: 'processing', ended_at: endedAt, lease_until: null })
        .where('id', '=', id)
        .where('status', '=', 'recording')
        .returning('room_id')
        .executeTakeFirst();
      return row ? Number(row.room_id) : null;
    },

    /**
     * One `processing` recording whose lease is free (never taken, or its
     * node died composing it), leased until `leaseUntil`, its attempts counted.
     */
    async claimProcessing(now: Date, leaseUntil: Date): Promise<RecordingWithRoom | null> {
      const { rows } = await sql<{ id: string }>`
        update recordings set lease_until = ${leaseUntil}, attempts = attempts + 1
        where id = (
          select id from recordings
          where status = 'processing' and (lease_until is null or lease_until <= ${now})
          order by ended_at nulls first, id
          limit 1
          for update skip locked)
        returning id`.execute(db);
      const id = rows[0]?.id;
      return id === undefined ? null : find(db, id);
    },

    /**
     * The outcome of processing attempt `attempt` (or of a recording that
     * had nothing), with its webhook event; written only while that attempt
     * is still the latest and the recording is processing. False otherwise.
     */
    async finish(id: string, attempt: number | null, outcome: Outcome, endedAt?: Date): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        let update = tx
          .updateTable('recordings')
          .set(
            outcome.status === 'ready'
              ? { status: 'ready', duration_seconds: outcome.durationSeconds, size_bytes: outcome.sizeBytes, content_type: outcome.contentType, lease_until: null, error: null }
              : { status: 'failed', error: outcome.error.slice(0, 1000), lease_until: null },
          )
          .where('id', '=', id)
          .where('status', 'in', ['processing', 'recording'] satisfies RecordingStatus[]);
        if (attempt !== null) update = update.where('attempts', '=', attempt).where('status', '=', 'processing');
        if (endedAt) update = update.set({ ended_at: sql<Date>`coalesce(ended_at, ${endedAt}::timestamptz)` });
        const result = await update.executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) return false;
        const row = (await find(tx, id))!;
        await enqueueEvent(tx, row.tenant_id, { type: outcome.status === 'ready' ? 'recording.ready' : 'recording.failed', data: eventData(row) });
        return true;
      });
    },

    ...storageStatements(db),
  };
}

/** The jobs' reads of leases, deletions, and the marks of the files still to remove (migration 0017's trigger writes them). */
function storageStatements(db: Db) {
  return {
    /** Recordings whose recording node's lease lapsed before `now`: their node died. */
    async lapsed(now: Date, limit: number): Promise<{ id: string; room_id: number; started_at: Date; lease_until: Date | null }[]> {
      const rows = await db
        .selectFrom('recordings')
        .select(['id', 'room_id', 'started_at', 'lease_until'])
        .where('status', '=', 'recording')
        .where('lease_until', '<', now)
        .orderBy('lease_until')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ ...row, room_id: Number(row.room_id) }));
    },

    /** Processing attempt `attempt` is still at work: its lease moved on. */
    async extendProcessing(id: string, attempt: number, leaseUntil: Date): Promise<void> {
      await db.updateTable('recordings').set({ lease_until: leaseUntil }).where('id', '=', id).where('status', '=', 'processing').where('attempts', '=', attempt).execute();
    },

    /** Processing attempt `attempt` stopped with its node (not failed): due again at once. */
    async release(id: string, attempt: number): Promise<void> {
      await db.updateTable('recordings').set({ lease_until: null }).where('id', '=', id).where('status', '=', 'processing').where('attempts', '=', attempt).execute();
    },

    /** Finished recordings that started before `before` (retention). */
    async expired(before: Date, limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom('recordings')
        .select('id')
        .where('started_at', '<', before)
        .where('status', 'in', ['ready', 'failed'] satisfies RecordingStatus[])
        .orderBy('started_at')
        .limit(limit)
        .execute();
      return rows.map((row) => row.id);
    },

    /** Deletes the recordings (the trigger marks their files), with an audit row each when `audit` names who did it. */
    async remove(ids: readonly string[], audit: { tokenId: string | null; at: Date } | null): Promise<string[]> {
      if (ids.length === 0) return [];
      return db.transaction().execute(async (tx) => {
        const rows = await tx
          .deleteFrom('recordings as r')
          .using('rooms')
          .whereRef('rooms.id', '=', 'r.room_id')
          .where('r.id', 'in', ids)
          .returning(['r.id', 'rooms.token', 'rooms.tenant_id', 'rooms.organization_id'])
          .execute();
        if (audit && rows.length > 0) {
          await tx
            .insertInto('recording_audit')
            .values(rows.map((row) => ({ recording_id: row.id, tenant_id: row.tenant_id, organization_id: row.organization_id, room_token: row.token, action: 'delete' as const, token_id: audit.tokenId, at: audit.at })))
            .execute();
        }
        return rows.map((row) => row.id);
      });
    },

    /** Directories still to remove, oldest first. */
    async deletedFiles(limit: number): Promise<string[]> {
      const rows = await db.selectFrom('recording_deleted_files').select('recording_id').orderBy('deleted_at').limit(limit).execute();
      return rows.map((row) => row.recording_id);
    },

    async filesRemoved(ids: readonly string[]): Promise<void> {
      if (ids.length > 0) await db.deleteFrom('recording_deleted_files').where('recording_id', 'in', ids).execute();
    },

    /** Which of `ids` are recordings (an id in neither this nor the marks has a directory nobody owns). */
    async existing(ids: readonly string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await db.selectFrom('recordings').select('id').where('id', 'in', ids).execute();
      const marked = await db.selectFrom('recording_deleted_files').select('recording_id').where('recording_id', 'in', ids).execute();
      return new Set([...rows.map((row) => row.id), ...marked.map((row) => row.recording_id)]);
    },
  };
}

export type RecordingsRepo = ReturnType<typeof createRecordingsRepo>;

// Recordings as the API serves them (docs/api.md, "Recordings"): listed with
// their consents, downloaded and deleted under the room's scope rules, each
// download and deletion written to the audit list with the API token that did it.
import fs from 'node:fs/promises';
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Principal } from '../auth/auth.service.js';
import type { Clock } from '../support/clock.js';
import type { RecordingFiles } from './recording-files.js';
import type { RecordingReadsRepo, ScopedRecording } from './recording-reads.repo.js';
import type { RecordingsRepo } from './recordings.repo.js';

export interface RecordingView {
  id: string;
  status: 'recording' | 'processing' | 'ready' | 'failed';
  started_at: string;
  ended_at: string | null;
  duration_seconds: number | null;
  size_bytes: number | null;
  content_type: string | null;
  started_by: string;
  consents: { display_name: string; role: 'host' | 'guest'; accepted_at: string }[];
}

export interface AuditView {
  action: 'download' | 'delete';
  at: string;
  /** The API token that did it (its id and label); null: Parley itself (retention). */
  token_id: string | null;
  token_label: string | null;
}

/** A ready recording's file, to be streamed; `audit()` records the download (call it when bytes are sent). */
export interface RecordingDownload {
  id: string;
  path: string;
  size: number;
  contentType: string;
  audit(): Promise<void>;
}

const scopeOf = (principal: Principal) => ({ tenantId: principal.tenantId, organizationId: principal.organizationId });

export function createRecordingsApi({ reads, repo, files, clock }: { reads: RecordingReadsRepo; repo: RecordingsRepo; files: RecordingFiles; clock: Clock }) {
  async function inScope(principal: Principal, id: string): Promise<ScopedRecording> {
    const recording = await reads.find(scopeOf(principal), id);
    if (!recording) throw new NotFoundError('Recording not found');
    return recording;
  }

  return {
    /** A room's recordings, oldest first, each with its consents. */
    async list(principal: Principal, roomToken: string): Promise<RecordingView[]> {
      const roomId = await reads.roomInScope(scopeOf(principal), roomToken);
      if (roomId === null) throw new NotFoundError('Room not found');
      const rows = await reads.ofRoom(scopeOf(principal), roomId);
      const consents = await repo.consents(rows.map((row) => row.id));
      return rows.map((row) => ({
        id: row.id,
        status: row.status,
        started_at: row.started_at.toISOString(),
        ended_at: row.ended_at?.toISOString() ?? null,
        duration_seconds: row.duration_seconds,
        size_bytes: row.size_bytes,
        content_type: row.content_type,
        started_by: row.started_by,
        consents: consents
          .filter((c) => c.recording_id === row.id)
          .map((c) => ({ display_name: c.display_name, role: c.role, accepted_at: c.accepted_at.toISOString() })),
      }));
    },

    /** The file of a ready recording. 409 while it is not ready. */
    async download(principal: Principal, id: string): Promise<RecordingDownload> {
      const recording = await inScope(principal, id);
      if (recording.status !== 'ready') throw new ConflictError(`The recording is not ready (status ${recording.status})`);
      const path = files.fileOf(id);
      const stat = await fs.stat(path).catch(() => null);
      if (!stat?.isFile()) throw new NotFoundError('Recording not found');
      return {
        id,
        path,
        size: stat.size,
        contentType: recording.content_type ?? 'video/webm',
        audit: () => reads.downloaded(recording, principal.tokenId, clock.now()),
      };
    },

    /**
     * Deletes the recording and its files, with the deletion in the audit
     * list. A recording in progress is stopped in the call first (409).
     */
    async remove(principal: Principal, id: string): Promise<void> {
      const recording = await inScope(principal, id);
      if (recording.status === 'recording') throw new ConflictError('The recording is in progress: stop it in the call first');
      const removed = await repo.remove([id], { tokenId: principal.tokenId, at: clock.now() });
      if (removed.length === 0) throw new NotFoundError('Recording not found');
      // The row's deletion marked the directory (migration 0017); removed now, the mark goes too.
      await files.remove(id);
      await repo.filesRemoved([id]);
    },

    /** Who downloaded and deleted the recording, when; kept after the recording is deleted. */
    async audit(principal: Principal, id: string): Promise<AuditView[]> {
      const rows = await reads.audit(scopeOf(principal), id);
      if (rows === null) throw new NotFoundError('Recording not found');
      return rows.map((row) => ({ action: row.action, at: row.at.toISOString(), token_id: row.token_id, token_label: row.token_label }));
    },
  };
}

// Participant sessions (docs/design.md, "Participant sessions"; docs/api.md): who was in a room's call,
// when and for how long, with what their browser measured; the scope rules of
// GET room (another organization's room is not found).
import { NotFoundError } from '../../errors.js';
import type { Principal } from '../auth/auth.service.js';
import type { Clock } from '../support/clock.js';
import type { NetworkSummary, SessionsRepo } from './sessions.repo.js';

interface SessionView {
  participant_token: string;
  role: 'host' | 'guest';
  display_name: string;
  joined_at: string;
  left_at: string | null;
  /** Until it left, or until now for someone still in the call. */
  duration_seconds: number;
  network: NetworkSummary | null;
}

export function createSessionsService({ repo, clock }: { repo: SessionsRepo; clock: Clock }) {
  return {
    async list(principal: Principal, roomToken: string): Promise<SessionView[]> {
      const rows = await repo.forRoom({ tenantId: principal.tenantId, organizationId: principal.organizationId }, roomToken);
      if (!rows) throw new NotFoundError('Room not found');
      const now = clock.now();
      return rows.map((row) => ({
        participant_token: row.participant_token,
        role: row.role,
        display_name: row.display_name,
        joined_at: row.joined_at.toISOString(),
        left_at: row.left_at?.toISOString() ?? null,
        duration_seconds: Math.max(0, Math.round(((row.left_at ?? now).getTime() - row.joined_at.getTime()) / 1000)),
        network: row.network,
      }));
    },
  };
}

export type SessionsService = ReturnType<typeof createSessionsService>;

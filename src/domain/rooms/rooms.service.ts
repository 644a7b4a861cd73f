// Rooms (docs/design.md#rooms). The route schemas have checked every field's
// type and range; this service decides what needs the database: the doctor's
// scope (400) and the feature toggles (422, decided after 400), in
// room-checks.ts.
import { NotFoundError } from '../../errors.js';
import type { Principal } from '../auth/auth.service.js';
import type { Clock } from '../support/clock.js';
import type { Ids } from '../support/ids.js';
import { cursorKey, invalidCursor, pageQuery, totalPages, type PageInfo, type PageRequest } from '../support/pagination.js';
import type { TenantsRepo } from '../tenants/tenants.repo.js';
import type { RoomEventBus } from '../buses/room-event-bus.js';
import { needsChecks, roomChecks, scopeOf, type CheckedInput } from './room-checks.js';
import type { OnRoomInserted } from './room-creates.repo.js';
import { CREATED_STATUS, cleanupBase, isClosed, scheduledEnd } from './room-lifecycle.js';
import type { RoomFields, RoomRow, RoomWithExtras, Versions } from './room-rows.repo.js';
import { storedSettings, type SentSettings } from './room-settings.js';
import type { RoomsRepo } from './rooms.repo.js';

/** A create's or a PUT's body: the settings (room-settings.ts), and what the checks decide. */
export type RoomInput = SentSettings & CheckedInput;

/** A room with what its API representation needs besides the row. */
export interface RoomView {
  row: RoomRow;
  currentParticipants: string[];
  waitingParticipants: string[];
  additionalTokens: string[];
  /** additional_access_tokens are shown only while the feature is on for the caller. */
  showAdditionalTokens: boolean;
}

interface Deps {
  rooms: RoomsRepo;
  tenants: TenantsRepo;
  events: RoomEventBus;
  ids: Ids;
  clock: Clock;
}

// Room keys are the bigint ids; a longer number would overflow the column's parameter.
const ROOM_KEY = /^\d{1,15}$/;

/** The extras stay on the row object, which the repository read in one statement with them. */
function view(row: RoomWithExtras): RoomView {
  return {
    row,
    currentParticipants: row.current_participants,
    waitingParticipants: row.waiting_participants,
    additionalTokens: row.additional_tokens,
    showAdditionalTokens: row.additional_enabled,
  };
}

export function createRoomsService({ rooms, tenants, events, ids, clock }: Deps) {
  const { resolveOwner, checkFeatures, requireRoom, writeRefused, checkUpdate } = roomChecks({ rooms, tenants, ids });

  return {
    /** onInserted commits or rolls back with the room (the Idempotency-Key record). */
    async create(principal: Principal, input: RoomInput, onInserted?: OnRoomInserted): Promise<RoomView> {
      const owner = await resolveOwner(principal, input.doctor_id);
      await checkFeatures(principal, input);
      const now = clock.now();
      const settings = storedSettings(input, principal);
      // One literal naming every other column, not a spread: see bench/README.md "Optimizations".
      const fields: RoomFields = {
        tenant_id: principal.tenantId,
        organization_id: owner.organizationId,
        doctor_id: owner.doctorId,
        token: ids.secret(16),
        access_token: ids.secret(32),
        guest_token: ids.secret(32),
        status: CREATED_STATUS,
        created_at: now,
        updated_at: now,
        started_at: null,
        ended_at: null,
        closed_at: null,
        emptied_at: null,
        cleanup_base_at: cleanupBase(scheduledEnd(settings.scheduled_at, settings.meeting_duration), now),
      };
      const guestTokens = Array.from({ length: input.additional_guest_count ?? 0 }, () => ids.secret(32));
      return view(await rooms.insert(scopeOf(principal), fields, settings, guestTokens, onInserted));
    },

    async get(principal: Principal, token: string): Promise<RoomView> {
      const row = await rooms.findWithExtras(scopeOf(principal), token);
      if (!row) throw new NotFoundError('Room not found');
      return view(row);
    },

    /**
     * PUT replaces the room's settings: omitted optional settings return to
     * their defaults. doctor_id and additional_guest_count change only
     * when sent, so a settings update never revokes links already handed out.
     */
    async update(principal: Principal, token: string, input: RoomInput, versions?: Versions): Promise<RoomView> {
      const checked = needsChecks(input) ? await checkUpdate(principal, token, input, versions) : undefined;
      const settings = storedSettings(input, principal);
      const row = await rooms.update(
        scopeOf(principal),
        token,
        {
          settings,
          updatedAt: clock.now(),
          scheduledEnd: scheduledEnd(settings.scheduled_at, settings.meeting_duration),
          removeDoctor: input.doctor_id === null,
          checked,
        },
        versions,
      );
      if (!row) return writeRefused(principal, token);
      events.publish({ type: 'room-updated', roomId: row.id });
      return view(row);
    },

    async close(principal: Principal, token: string, versions?: Versions): Promise<void> {
      const existing = await requireRoom(principal, token, versions);
      const closed = await rooms.close(existing.id, clock.now(), versions);
      // Nothing closed under If-Match: already closed with that version (204 again), or changed meanwhile.
      if (!closed && versions && !isClosed(existing.status)) return writeRefused(principal, token);
      // Closing a closed room is 204 again (docs/design.md#room-lifecycle); the call hears of it either way.
      events.publish({ type: 'room-closed', roomId: (closed ?? existing).id });
    },

    async delete(principal: Principal, token: string, versions?: Versions): Promise<void> {
      const existing = await requireRoom(principal, token, versions);
      if (!(await rooms.delete(existing.id, versions)) && versions) return writeRefused(principal, token);
      events.publish({ type: 'room-deleted', roomId: existing.id });
    },

    async list(principal: Principal, request: PageRequest): Promise<{ rooms: RoomView[]; info: PageInfo; firstKey: string | null; lastKey: string | null }> {
      const key = cursorKey(request.cursor);
      if (key !== null && !ROOM_KEY.test(key)) throw invalidCursor();
      const scope = scopeOf(principal);
      const totalCount = await rooms.count(scope);
      const rows = await rooms.page(scope, pageQuery(request, totalCount));
      return {
        rooms: rows.map(view),
        info: { page: request.page, perPage: request.perPage, totalCount, totalPages: totalPages(totalCount, request.perPage) },
        firstKey: rows.length ? String(rows[0]!.id) : null,
        lastKey: rows.length ? String(rows[rows.length - 1]!.id) : null,
      };
    },
  };
}

export type RoomsService = ReturnType<typeof createRoomsService>;

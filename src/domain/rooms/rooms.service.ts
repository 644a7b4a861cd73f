// Rooms (docs/design.md#rooms). The route schemas have checked every field's
// type and range; this service decides what needs the database: the doctor's
// scope (400) and the feature toggles (422, decided after 400).
import { FeatureDisabledError, NotFoundError, PreconditionFailedError, ValidationError } from '../../errors.js';
import type { Principal } from '../auth/auth.service.js';
import type { Clock } from '../support/clock.js';
import type { Ids } from '../support/ids.js';
import { cursorKey, invalidCursor, pageQuery, totalPages, type PageInfo, type PageRequest } from '../support/pagination.js';
import type { TenantsRepo } from '../tenants/tenants.repo.js';
import type { RoomEventBus } from '../buses/room-event-bus.js';
import { CREATED_STATUS, cleanupBase, isClosed, scheduledEnd } from './room-lifecycle.js';
import type { CheckedUpdate, NewRoom, OnRoomInserted, RoomRow, RoomScope, RoomsRepo, RoomWithExtras, Versions } from './rooms.repo.js';

export interface RoomInput {
  name: string;
  meeting_duration: number;
  scheduled_at: string;
  return_url?: string | null;
  host_return_url?: string | null;
  host_display_name?: string | null;
  guest_display_name?: string | null;
  enable_chat?: boolean;
  enable_screenshare?: boolean;
  enable_invites?: boolean;
  enable_audio_indicator?: boolean;
  enable_waiting_room?: boolean;
  locale?: string | null;
  additional_guest_count?: number;
  permanent?: boolean;
  doctor_id?: string | null;
}

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

function scopeOf(principal: Principal): RoomScope {
  return { tenantId: principal.tenantId, organizationId: principal.organizationId, additionalParticipants: principal.additionalParticipants };
}

/**
 * Whether a PUT can be refused after its room is found (400 for the doctor,
 * 422 for a feature) or changes the guest links, which are counted first:
 * then the room is read before anything else, since 404 and 412 come first.
 */
function needsChecks(input: RoomInput): boolean {
  return (input.doctor_id !== undefined && input.doctor_id !== null) || input.permanent === true || input.additional_guest_count !== undefined;
}

function displayName(value: string | null | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

export function createRoomsService({ rooms, tenants, events, ids, clock }: Deps) {
  const feature = (principal: Principal, name: string) =>
    tenants.featureEnabled(principal.tenantId, principal.organizationId, name);

  /** The organization a room belongs to: the doctor's, else the caller's. */
  async function resolveOwner(principal: Principal, doctorId: string | null | undefined) {
    if (doctorId === undefined || doctorId === null) return { organizationId: principal.organizationId, doctorId: null };
    const doctor = await tenants.findDoctor(principal.tenantId, doctorId);
    if (!doctor || (principal.organizationId !== null && doctor.organization_id !== principal.organizationId)) {
      throw ValidationError.of('doctor_id', 'invalid', 'is not a doctor in the scope of this token');
    }
    return { organizationId: doctor.organization_id, doctorId: doctor.id };
  }

  async function checkFeatures(principal: Principal, input: RoomInput) {
    if (input.permanent === true && !(await feature(principal, 'permanent_rooms'))) {
      throw new FeatureDisabledError('Permanent rooms are not enabled (feature permanent_rooms)');
    }
    if ((input.additional_guest_count ?? 0) > 0 && !principal.additionalParticipants) {
      throw new FeatureDisabledError('Additional participants are not enabled (feature additional_participants)');
    }
  }

  function settings(principal: Principal, input: RoomInput) {
    return {
      name: input.name.trim(),
      meeting_duration: input.meeting_duration,
      scheduled_at: new Date(input.scheduled_at),
      return_url: input.return_url ?? principal.tenantReturnUrl,
      host_return_url: input.host_return_url ?? null,
      host_display_name: displayName(input.host_display_name),
      guest_display_name: displayName(input.guest_display_name),
      enable_chat: input.enable_chat ?? true,
      enable_screenshare: input.enable_screenshare ?? true,
      enable_invites: input.enable_invites ?? true,
      enable_audio_indicator: input.enable_audio_indicator ?? true,
      enable_waiting_room: input.enable_waiting_room ?? false,
      locale: input.locale ?? null,
      permanent: input.permanent ?? false,
    };
  }

  /** The extras stay on the row object, which the repository read in one statement with them. */
  function view(row: RoomWithExtras): RoomView {
    return {
      row,
      currentParticipants: row.current_participants,
      waitingParticipants: row.waiting_participants,
      additionalTokens: row.additional_tokens, showAdditionalTokens: row.additional_enabled };
  }

  async function requireRoom(principal: Principal, token: string, versions?: Versions): Promise<RoomRow> {
    const row = await rooms.findByToken(scopeOf(principal), token);
    if (!row) throw new NotFoundError('Room not found');
    if (versions && !versions.includes(row.version)) throw new PreconditionFailedError();
    return row;
  }

  /**
   * A conditional write that changed nothing: the room went away (404) or
   * changed (412) after it was read. The write itself was atomic; this read
   * only picks the answer.
   */
  async function writeRefused(principal: Principal, token: string): Promise<never> {
    await requireRoom(principal, token);
    throw new PreconditionFailedError();
  }

  /**
   * The room of a PUT and the decisions that need it, in the order the API
   * answers: 404 or 412, then the doctor (400), then the features (422).
   */
  async function checkUpdate(principal: Principal, token: string, input: RoomInput, versions?: Versions): Promise<CheckedUpdate> {
    const existing = await requireRoom(principal, token, versions);
    // null takes the doctor off the room; the room stays in its organization
    // (an Instance token must not pull a room out of the organization that sees it).
    const owner =
      input.doctor_id === undefined
        ? { organizationId: existing.organization_id, doctorId: existing.doctor_id }
        : input.doctor_id === null
          ? { organizationId: existing.organization_id, doctorId: null }
          : await resolveOwner(principal, input.doctor_id);
    await checkFeatures(principal, input);
    let add: string[] = [];
    let removeCount = 0;
    if (input.additional_guest_count !== undefined) {
      const current = await rooms.countAdditionalTokens(existing.id);
      add = Array.from({ length: Math.max(0, input.additional_guest_count - current) }, () => ids.secret(32));
      removeCount = Math.max(0, current - input.additional_guest_count);
    }
    return { room: existing, organizationId: owner.organizationId, doctorId: owner.doctorId, guestTokens: { add, removeCount } };
  }

  return {
    /** onInserted commits or rolls back with the room (the Idempotency-Key record). */
    async create(principal: Principal, input: RoomInput, onInserted?: OnRoomInserted): Promise<RoomView> {
      const owner = await resolveOwner(principal, input.doctor_id);
      await checkFeatures(principal, input);
      const now = clock.now();
      const values = settings(principal, input);
      // One literal naming every column, not a spread: see bench/README.md "Optimizations".
      const room: NewRoom = {
        tenant_id: principal.tenantId,
        organization_id: owner.organizationId,
        doctor_id: owner.doctorId,
        token: ids.secret(16),
        access_token: ids.secret(32),
        guest_token: ids.secret(32),
        name: values.name,
        status: CREATED_STATUS,
        host_display_name: values.host_display_name,
        guest_display_name: values.guest_display_name,
        enable_chat: values.enable_chat,
        enable_screenshare: values.enable_screenshare,
        enable_invites: values.enable_invites,
        enable_audio_indicator: values.enable_audio_indicator,
        enable_waiting_room: values.enable_waiting_room,
        locale: values.locale,
        scheduled_at: values.scheduled_at,
        meeting_duration: values.meeting_duration,
        return_url: values.return_url,
        host_return_url: values.host_return_url,
        permanent: values.permanent,
        created_at: now,
        updated_at: now,
        started_at: null,
        ended_at: null,
        closed_at: null,
        emptied_at: null,
        cleanup_base_at: cleanupBase(scheduledEnd(values.scheduled_at, values.meeting_duration), now),
      };
      const guestTokens = Array.from({ length: input.additional_guest_count ?? 0 }, () => ids.secret(32));
      return view(await rooms.insert(scopeOf(principal), room, guestTokens, onInserted));
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
      const values = settings(principal, input);
      const row = await rooms.update(
        scopeOf(principal),
        token,
        {
          settings: values,
          updatedAt: clock.now(),
          scheduledEnd: scheduledEnd(values.scheduled_at, values.meeting_duration),
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

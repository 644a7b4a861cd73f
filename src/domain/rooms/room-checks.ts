// What a write to a room needs the database to decide before it is made, in
// the order the API answers (docs/design.md, "Rooms"): the room itself (404,
// then 412 for If-Match), the doctor's scope (400), the feature toggles (422).
import { FeatureDisabledError, NotFoundError, PreconditionFailedError, ValidationError } from '../../errors.js';
import type { Principal } from '../auth/auth.service.js';
import type { Ids } from '../support/ids.js';
import type { TenantsRepo } from '../tenants/tenants.repo.js';
import type { RoomRow, RoomScope, Versions } from './room-rows.repo.js';
import type { CheckedUpdate } from './room-updates.repo.js';
import type { RoomsRepo } from './rooms.repo.js';

/** What of a create or a PUT the checks read besides the settings. */
export interface CheckedInput {
  permanent?: boolean;
  enable_recording?: boolean;
  additional_guest_count?: number;
  doctor_id?: string | null;
}

export function scopeOf(principal: Principal): RoomScope {
  return { tenantId: principal.tenantId, organizationId: principal.organizationId, additionalParticipants: principal.additionalParticipants };
}

/**
 * Whether a PUT can be refused after its room is found (400 for the doctor,
 * 422 for a feature) or changes the guest links, which are counted first:
 * then the room is read before anything else, since 404 and 412 come first.
 */
export function needsChecks(input: CheckedInput): boolean {
  return (input.doctor_id !== undefined && input.doctor_id !== null) || input.permanent === true || input.enable_recording === true || input.additional_guest_count !== undefined;
}

export function roomChecks({ rooms, tenants, ids }: { rooms: RoomsRepo; tenants: TenantsRepo; ids: Ids }) {
  const feature = (principal: Principal, name: string) => tenants.featureEnabled(principal.tenantId, principal.organizationId, name);

  /** The organization a room belongs to: the doctor's, else the caller's. */
  async function resolveOwner(principal: Principal, doctorId: string | null | undefined) {
    if (doctorId === undefined || doctorId === null) return { organizationId: principal.organizationId, doctorId: null };
    const doctor = await tenants.findDoctor(principal.tenantId, doctorId);
    if (!doctor || (principal.organizationId !== null && doctor.organization_id !== principal.organizationId)) {
      throw ValidationError.of('doctor_id', 'invalid', 'is not a doctor in the scope of this token');
    }
    return { organizationId: doctor.organization_id, doctorId: doctor.id };
  }

  async function checkFeatures(principal: Principal, input: CheckedInput) {
    if (input.permanent === true && !(await feature(principal, 'permanent_rooms'))) {
      throw new FeatureDisabledError('Permanent rooms are not enabled (feature permanent_rooms)');
    }
    if (input.enable_recording === true && !(await feature(principal, 'recording'))) {
      throw new FeatureDisabledError('Recording is not enabled (feature recording)');
    }
    if ((input.additional_guest_count ?? 0) > 0 && !principal.additionalParticipants) {
      throw new FeatureDisabledError('Additional participants are not enabled (feature additional_participants)');
    }
  }

  async function requireRoom(principal: Principal, token: string, versions?: Versions): Promise<RoomRow> {
    const row = await rooms.findByToken(scopeOf(principal), token);
    if (!row) throw new NotFoundError('Room not found');
    if (versions && !versions.includes(row.version)) throw new PreconditionFailedError();
    return row;
  }

  return {
    resolveOwner,
    checkFeatures,
    requireRoom,

    /**
     * A conditional write that changed nothing: the room went away (404) or
     * changed (412) after it was read. The write itself was atomic; this read
     * only picks the answer.
     */
    async writeRefused(principal: Principal, token: string): Promise<never> {
      await requireRoom(principal, token);
      throw new PreconditionFailedError();
    },

    /**
     * The room of a PUT and the decisions that need it, in the order the API
     * answers: 404 or 412, then the doctor (400), then the features (422).
     */
    async checkUpdate(principal: Principal, token: string, input: CheckedInput, versions?: Versions): Promise<CheckedUpdate> {
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
    },
  };
}

// Idempotency-Key on room creation (docs/security.md; the idea of
// draft-ietf-httpapi-idempotency-key-header): a create retried with the same
// key and the same request gets the room the first attempt made, never a
// second one; the same key with another request is 422. Keys belong to the
// API token that used them and live 24 hours.
import { ConflictError, NotFoundError, UnprocessableError } from '../../errors.js';
import type { Principal } from '../auth/auth.service.js';
import type { RoomInput, RoomView, RoomsService } from '../rooms/rooms.service.js';
import type { Clock } from '../support/clock.js';
import { digestsEqual } from '../support/secrets.js';
import type { IdempotencyRepo, KeyRecord } from './idempotency.repo.js';

export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** Thrown inside the create transaction when the key is taken: rolls the new room back. */
class KeyTaken extends Error {}

export function createIdempotencyService({ repo, rooms, clock }: { repo: IdempotencyRepo; rooms: RoomsService; clock: Clock }) {
  async function replay(principal: Principal, record: KeyRecord, fingerprint: Uint8Array): Promise<RoomView> {
    if (!digestsEqual(record.fingerprint, fingerprint)) {
      throw new UnprocessableError('This Idempotency-Key was already used with a different request; use a new key for a new room');
    }
    try {
      return await rooms.get(principal, record.room_token);
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error;
      throw new ConflictError('The room created with this Idempotency-Key no longer exists; use a new key to create another');
    }
  }

  return {
    /**
     * Creates the room once per (token, key). `fingerprint` identifies the
     * request (the route hashes the fields it reads). replayed = an earlier
     * attempt made this room.
     */
    async createRoom(principal: Principal, key: string, fingerprint: Uint8Array, input: RoomInput): Promise<{ view: RoomView; replayed: boolean }> {
      const now = clock.now();
      const notBefore = new Date(now.getTime() - KEY_LIFETIME_MS);
      // The common retry (the first attempt finished long ago) is answered by one read.
      const earlier = await repo.find(principal.tokenId, key, notBefore);
      if (earlier) return { view: await replay(principal, earlier, fingerprint), replayed: true };
      try {
        const view = await rooms.create(principal, input, async (tx, row) => {
          const record = { token_id: principal.tokenId, key, fingerprint, room_token: row.token, created_at: now };
          if (!(await repo.record(tx, record, notBefore))) throw new KeyTaken();
        });
        return { view, replayed: false };
      } catch (error) {
        if (!(error instanceof KeyTaken)) throw error;
        // A concurrent attempt with the same key committed first: answer with its room.
        const winner = await repo.find(principal.tokenId, key, notBefore);
        if (!winner) throw new ConflictError('A request with this Idempotency-Key is being processed; retry shortly');
        return { view: await replay(principal, winner, fingerprint), replayed: true };
      }
    },

    /** The purge job: forgets keys older than 24 hours. */
    purgeExpired: () => repo.purge(new Date(clock.now().getTime() - KEY_LIFETIME_MS)),
  };
}

export type IdempotencyService = ReturnType<typeof createIdempotencyService>;

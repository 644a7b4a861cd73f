// Idempotency-Key records (migration 0002): one per API token and key, kept 24 hours.
import type { Transaction } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Database } from '../../db/schema.js';

export interface KeyRecord {
  token_id: string;
  key: string;
  fingerprint: Uint8Array;
  room_token: string;
  created_at: Date;
}

export function createIdempotencyRepo(db: Db) {
  return {
    /** The live record of a key (created at or after notBefore), or null. */
    async find(tokenId: string, key: string, notBefore: Date): Promise<KeyRecord | null> {
      const row = await db
        .selectFrom('idempotency_keys')
        .selectAll()
        .where('token_id', '=', tokenId)
        .where('key', '=', key)
        .where('created_at', '>=', notBefore)
        .executeTakeFirst();
      return row ?? null;
    },

    /**
     * Records a key inside the transaction that creates its room. False when a
     * live record of the key exists: the primary key makes a concurrent insert
     * of the same key wait for the first transaction, then conflict. An expired
     * record that the purge has not reached yet is taken over.
     */
    async record(tx: Transaction<Database>, record: KeyRecord, notBefore: Date): Promise<boolean> {
      const row = await tx
        .insertInto('idempotency_keys')
        .values(record)
        .onConflict((oc) =>
          oc
            .columns(['token_id', 'key'])
            .doUpdateSet({ fingerprint: record.fingerprint, room_token: record.room_token, created_at: record.created_at })
            .where('idempotency_keys.created_at', '<', notBefore),
        )
        .returning('key')
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Deletes the records created before `before`; returns how many. */
    async purge(before: Date): Promise<number> {
      const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}

export type IdempotencyRepo = ReturnType<typeof createIdempotencyRepo>;

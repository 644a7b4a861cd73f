// Rooms read in SQL: one room (GET compiled once), a page of the list and
// its count, and a room's number of additional guests.
import type { Db } from '../../db/client.js';
import { prepare } from '../../db/prepared.js';
import { WHOLE_TENANT } from '../../db/schema.js';
import type { PageQuery } from '../support/pagination.js';
import { byToken, extras, ROOM_COLUMNS, type RoomRow, type RoomScope, type RoomWithExtras } from './room-rows.repo.js';

export function roomReads(db: Db) {
  // GET /api/rooms/{token}, compiled once.
  const findRoom = prepare(db, (scope: RoomScope, which: { token: string }) =>
    db
      .selectFrom('rooms')
      .select(ROOM_COLUMNS)
      .select(extras(scope))
      .where(byToken(scope, which.token)),
  );
  /** The rooms in scope with their extras, for a page of the list (found through rooms_tenant_list_idx or rooms_organization_list_idx). */
  const listed = (scope: RoomScope) => {
    let query = db.selectFrom('rooms').selectAll().select(extras(scope)).where('tenant_id', '=', scope.tenantId);
    if (scope.organizationId !== null) query = query.where('organization_id', '=', scope.organizationId);
    return query;
  };

  return {
    async findByToken(scope: RoomScope, token: string): Promise<RoomRow | null> {
      return (await db.selectFrom('rooms').selectAll().where(byToken(scope, token)).executeTakeFirst()) ?? null;
    },

    async findWithExtras(scope: RoomScope, token: string): Promise<RoomWithExtras | null> {
      const [row] = await findRoom(scope, { token });
      return row ?? null;
    },

    /**
     * Number of rooms in scope, from the counts the triggers keep (never a scan):
     * the sum of the scope's shards (0007_sharded_counts.sql), at most 16 rows of the key.
     */
    async count(scope: RoomScope): Promise<number> {
      const row = await db
        .selectFrom('room_counts')
        .select((eb) => eb.fn.sum<string | number | null>('count').as('count'))
        .where('tenant_id', '=', scope.tenantId)
        .where('organization_id', '=', scope.organizationId ?? WHOLE_TENANT)
        .executeTakeFirst();
      return Number(row?.count ?? 0);
    },

    /** One page of rooms in scope with their extras, oldest first. */
    async page(scope: RoomScope, query: PageQuery): Promise<RoomWithExtras[]> {
      switch (query.kind) {
        case 'empty':
          return [];
        case 'offset': {
          // page=N: the skipping happens in the (tenant_id, id) index alone, and only
          // the page's own rows are read and get their extras. OFFSET over the full
          // select would compute the extras of every skipped room.
          let first = db.selectFrom('rooms').select('id').where('tenant_id', '=', scope.tenantId);
          if (scope.organizationId !== null) first = first.where('organization_id', '=', scope.organizationId);
          const start = first.orderBy('id').offset(query.offset).limit(1);
          return listed(scope).where('id', '>=', start).orderBy('id').limit(query.limit).execute();
        }
        case 'after':
          return listed(scope).where('id', '>', Number(query.key)).orderBy('id').limit(query.limit).execute();
        case 'before':
          return (await listed(scope).where('id', '<', Number(query.key)).orderBy('id', 'desc').limit(query.limit).execute()).reverse();
        case 'tail':
          return (await listed(scope).orderBy('id', 'desc').limit(query.limit).execute()).reverse();
      }
    },

    async countAdditionalTokens(roomId: number): Promise<number> {
      const row = await db
        .selectFrom('room_guest_tokens')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('room_id', '=', roomId)
        .where('kind', '=', 'additional')
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}

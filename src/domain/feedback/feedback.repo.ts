import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Rating, RoomFeedbacksTable } from '../../db/schema.js';
import type { PageQuery } from '../support/pagination.js';
import { isCalendarDate } from '../support/timezone.js';
import { enqueueEvent } from '../webhooks/webhook-events.js';

export type FeedbackRow = Selectable<RoomFeedbacksTable>;

export interface FeedbackFilter {
  tenantId: string;
  rating: Rating | null;
  /** Inclusive calendar days in the tenant's timezone. */
  from: string | null;
  to: string | null;
}

/** Feedback rows are ordered by (local_day, id): oldest first, and an index order. */
export function feedbackKey(row: FeedbackRow): string {
  return `${row.local_day}.${row.id}`;
}

function parseKey(key: string): [string, number] | null {
  const match = /^(\d{4}-\d{2}-\d{2})\.(\d{1,15})$/.exec(key);
  // The day goes through ::date, which rejects 2025-02-30 with an error.
  return match && isCalendarDate(match[1]!) ? [match[1]!, Number(match[2])] : null;
}

export function isFeedbackKey(key: string): boolean {
  return parseKey(key) !== null;
}

export function createFeedbackRepo(db: Db) {
  function filtered(filter: FeedbackFilter) {
    let query = db.selectFrom('room_feedbacks').selectAll().where('tenant_id', '=', filter.tenantId);
    if (filter.rating) query = query.where('rating', '=', filter.rating);
    if (filter.from) query = query.where('local_day', '>=', filter.from);
    if (filter.to) query = query.where('local_day', '<=', filter.to);
    return query;
  }

  function counts(filter: FeedbackFilter) {
    let query = db.selectFrom('feedback_daily_counts').where('tenant_id', '=', filter.tenantId);
    if (filter.rating) query = query.where('rating', '=', filter.rating);
    if (filter.from) query = query.where('day', '>=', filter.from);
    if (filter.to) query = query.where('day', '<=', filter.to);
    return query;
  }

  return {
    /**
     * Inserts a feedback and its feedback.created event, in one transaction;
     * false when this participant session already gave one (and no event).
     */
    async insert(row: Omit<FeedbackRow, 'id'>): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const inserted = await tx
          .insertInto('room_feedbacks')
          .values(row)
          .onConflict((oc) => oc.column('participant_token').doNothing())
          .returning('id')
          .executeTakeFirst();
        if (!inserted) return false;
        await enqueueEvent(tx, row.tenant_id, {
          type: 'feedback.created',
          data: { room_token: row.room_token, rating: row.rating, feedback: row.feedback, created_at: row.created_at.toISOString() },
        });
        return true;
      });
    },

    /** Counts per rating from the daily counts the trigger keeps (never a scan of the feedbacks). */
    async countByRating(filter: FeedbackFilter): Promise<Record<Rating, number>> {
      const rows = await counts(filter)
        .select(['rating', (eb) => eb.fn.sum<number>('count').as('n')])
        .groupBy('rating')
        .execute();
      const result: Record<Rating, number> = { good: 0, neutral: 0, bad: 0 };
      for (const row of rows) result[row.rating] = Number(row.n);
      return result;
    },

    async page(filter: FeedbackFilter, query: PageQuery): Promise<FeedbackRow[]> {
      const keyed = (key: string) => parseKey(key) ?? ['0001-01-01', 0];
      switch (query.kind) {
        case 'empty':
          return [];
        case 'offset':
          return filtered(filter).orderBy('local_day').orderBy('id').offset(query.offset).limit(query.limit).execute();
        case 'after': {
          const [day, id] = keyed(query.key);
          return filtered(filter)
            .where(sql<boolean>`(local_day, id) > (${day}::date, ${id})`)
            .orderBy('local_day')
            .orderBy('id')
            .limit(query.limit)
            .execute();
        }
        case 'before': {
          const [day, id] = keyed(query.key);
          const rows = await filtered(filter)
            .where(sql<boolean>`(local_day, id) < (${day}::date, ${id})`)
            .orderBy('local_day', 'desc')
            .orderBy('id', 'desc')
            .limit(query.limit)
            .execute();
          return rows.reverse();
        }
        case 'tail':
          return (await filtered(filter).orderBy('local_day', 'desc').orderBy('id', 'desc').limit(query.limit).execute()).reverse();
      }
    },
  };
}

export type FeedbackRepo = ReturnType<typeof createFeedbackRepo>;

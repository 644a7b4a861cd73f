// Room feedback (docs/api.md): recorded once per participant session after
// a call, read by Instance tokens only, filtered by days in the tenant's timezone.
import { ForbiddenError, ValidationError } from '../../errors.js';
import type { Rating } from '../../db/schema.js';
import type { Principal } from '../auth/auth.service.js';
import type { Clock } from '../support/clock.js';
import { cursorKey, invalidCursor, pageQuery, totalPages, type PageInfo, type PageRequest } from '../support/pagination.js';
import { isCalendarDate, localDay } from '../support/timezone.js';
import { feedbackKey, isFeedbackKey, type FeedbackFilter, type FeedbackRepo, type FeedbackRow } from './feedback.repo.js';

export const MAX_FEEDBACK_LENGTH = 2000;
export const FEEDBACK_FORBIDDEN = 'Room feedback is available to Instance API tokens only';
export const RATINGS: readonly Rating[] = ['good', 'neutral', 'bad'];

export interface FeedbackQuery {
  rating?: Rating;
  from?: string;
  to?: string;
}

interface Deps {
  repo: FeedbackRepo;
  clock: Clock;
}

export function createFeedbackService({ repo, clock }: Deps) {
  function filterFor(principal: Principal, query: FeedbackQuery): FeedbackFilter {
    if (principal.kind !== 'instance') throw new ForbiddenError(FEEDBACK_FORBIDDEN);
    const errors: { attribute: string; type: string; message: string }[] = [];
    for (const attribute of ['from', 'to'] as const) {
      const value = query[attribute];
      if (value !== undefined && !isCalendarDate(value)) errors.push({ attribute, type: 'invalid', message: 'must be a date written YYYY-MM-DD' });
    }
    if (errors.length) throw new ValidationError(errors);
    return { tenantId: principal.tenantId, rating: query.rating ?? null, from: query.from ?? null, to: query.to ?? null };
  }

  return {
    /**
     * Records a participant's feedback. Returns false when that participant
     * session already gave one (at most one per session).
     */
    async record(input: {
      tenantId: string;
      timezone: string;
      roomToken: string;
      participantToken: string;
      rating: Rating;
      comment: string | null;
    }): Promise<boolean> {
      const comment = input.comment?.trim() || null;
      if (comment && [...comment].length > MAX_FEEDBACK_LENGTH) {
        throw ValidationError.of('feedback', 'too_long', `is too long (maximum is ${MAX_FEEDBACK_LENGTH} characters)`);
      }
      const now = clock.now();
      return repo.insert({
        tenant_id: input.tenantId,
        room_token: input.roomToken,
        participant_token: input.participantToken,
        rating: input.rating,
        feedback: comment,
        local_day: localDay(now, input.timezone),
        created_at: now,
      });
    },

    async list(
      principal: Principal,
      query: FeedbackQuery,
      request: PageRequest,
    ): Promise<{ feedbacks: FeedbackRow[]; info: PageInfo; firstKey: string | null; lastKey: string | null }> {
      const filter = filterFor(principal, query);
      const key = cursorKey(request.cursor);
      if (key !== null && !isFeedbackKey(key)) throw invalidCursor();
      const byRating = await repo.countByRating(filter);
      const totalCount = byRating.good + byRating.neutral + byRating.bad;
      const rows = await repo.page(filter, pageQuery(request, totalCount));
      return {
        feedbacks: rows,
        info: { page: request.page, perPage: request.perPage, totalCount, totalPages: totalPages(totalCount, request.perPage) },
        firstKey: rows.length ? feedbackKey(rows[0]!) : null,
        lastKey: rows.length ? feedbackKey(rows[rows.length - 1]!) : null,
      };
    },

    async summary(principal: Principal, query: Omit<FeedbackQuery, 'rating'>) {
      const filter = filterFor(principal, { from: query.from, to: query.to });
      const byRating = await repo.countByRating(filter);
      return {
        total: byRating.good + byRating.neutral + byRating.bad,
        ...byRating,
        from: query.from ?? null,
        to: query.to ?? null,
      };
    },
  };
}

export type FeedbackService = ReturnType<typeof createFeedbackService>;

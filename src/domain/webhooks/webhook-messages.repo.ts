// The outbox in SQL: claiming due messages, recording each attempt, and the
// endpoint's run of failures. A claim is a short transaction of its own (FOR
// UPDATE SKIP LOCKED: nodes claiming at once never get the same row) that
// moves the message's next attempt past a lease: the POST happens outside any
// transaction (PGlite has one connection; a transaction held for a 10 s POST
// would stop every other query), and if the node dies the lease runs out and
// another node sends the message again, with the same webhook-id.
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface ClaimedMessage {
  id: number;
  msg_id: string;
  type: string;
  data: unknown;
  occurred_at: Date;
  /** This attempt's number: 1 for the first. */
  attempts: number;
  endpoint_id: string;
  url: string;
  secret: string;
}

export function createWebhookMessagesRepo(db: Db) {
  return {
    /** Up to `limit` messages due at `now` of endpoints still enabled, leased until `leaseUntil`. */
    async claim(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedMessage[]> {
      const { rows } = await sql<ClaimedMessage>`
        update webhook_messages m set attempts = m.attempts + 1, next_attempt_at = ${leaseUntil}
        from webhook_endpoints e
        where e.id = m.endpoint_id and m.id in (
          select d.id from webhook_messages d
          where d.delivered_at is null and d.failed_at is null
            and (d.next_attempt_at is null or d.next_attempt_at <= ${now})
            and exists (select 1 from webhook_endpoints de where de.id = d.endpoint_id and de.disabled_at is null)
          order by d.next_attempt_at nulls first, d.id
          limit ${limit}
          for update skip locked)
        returning m.id, m.msg_id, m.type, m.data, m.occurred_at, m.attempts, e.id as endpoint_id, e.url, e.secret`.execute(db);
      // RETURNING has no order: the events' order is the ids'.
      return rows.map((row) => ({ ...row, id: Number(row.id) })).sort((a, b) => a.id - b.id);
    },

    /**
     * The outcome of attempt `attempt` of a message. Written only while that
     * attempt is still the message's latest: a node whose lease ran out does
     * not overwrite what the next attempt recorded.
     */
    async delivered(id: number, attempt: number, endpointId: string, at: Date, status: number): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await tx
          .updateTable('webhook_messages')
          .set({ delivered_at: at, last_status: status, last_error: null, next_attempt_at: null })
          .where('id', '=', id)
          .where('attempts', '=', attempt)
          .execute();
        await tx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', endpointId).where('failing_since', 'is not', null).execute();
      });
    },

    /**
     * A failed attempt: tried again at `retryAt`, or given up when null. The
     * endpoint is disabled when it has failed without a success since `disableBefore`.
     */
    async failed(
      message: { id: number; attempt: number; endpointId: string },
      outcome: { at: Date; status: number | null; error: string; retryAt: Date | null },
      disableBefore: Date,
    ): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await tx
          .updateTable('webhook_messages')
          .set({
            last_status: outcome.status,
            last_error: outcome.error,
            next_attempt_at: outcome.retryAt,
            failed_at: outcome.retryAt === null ? outcome.at : null,
          })
          .where('id', '=', message.id)
          .where('attempts', '=', message.attempt)
          .where('delivered_at', 'is', null)
          .execute();
        await sql`
          update webhook_endpoints set
            failing_since = coalesce(failing_since, ${outcome.at}),
            disabled_at = case when coalesce(failing_since, ${outcome.at}) <= ${disableBefore} then ${outcome.at}::timestamptz end,
            disabled_reason = case when coalesce(failing_since, ${outcome.at}) <= ${disableBefore}
              then 'Every delivery failed since ' || to_char(coalesce(failing_since, ${outcome.at}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                || '; the last: ' || ${outcome.error} end
          where id = ${message.endpointId} and disabled_at is null`.execute(tx);
      });
    },

    /**
     * Deletes delivered and given-up messages older than `before`, and the
     * waiting messages of endpoints that no longer exist; returns how many.
     * Those orphans come from a join or a leave that wrote its message while
     * the endpoint was being deleted (migration 0009: no foreign key); no
     * claim takes them, since a claim joins the endpoint.
     */
    async purge(before: Date): Promise<number> {
      const done = await db
        .deleteFrom('webhook_messages')
        .where(sql<boolean>`coalesce(delivered_at, failed_at) < ${before}`)
        .where((eb) => eb.or([eb('delivered_at', 'is not', null), eb('failed_at', 'is not', null)]))
        .executeTakeFirst();
      const orphans = await db
        .deleteFrom('webhook_messages as m')
        .where('m.delivered_at', 'is', null)
        .where('m.failed_at', 'is', null)
        .where((eb) => eb.not(eb.exists(eb.selectFrom('webhook_endpoints as e').select(sql`1`.as('one')).whereRef('e.id', '=', 'm.endpoint_id'))))
        .executeTakeFirst();
      return Number(done.numDeletedRows) + Number(orphans.numDeletedRows);
    },

    /** Per endpoint: messages waiting, delivered, given up (for the operator). */
    async countsByEndpoint(tenantId: string): Promise<Map<string, { pending: number; delivered: number; failed: number }>> {
      const rows = await db
        .selectFrom('webhook_messages as m')
        .innerJoin('webhook_endpoints as e', 'e.id', 'm.endpoint_id')
        .where('e.tenant_id', '=', tenantId)
        .select([
          'm.endpoint_id',
          sql<number>`count(*) filter (where m.delivered_at is null and m.failed_at is null)`.as('pending'),
          sql<number>`count(*) filter (where m.delivered_at is not null)`.as('delivered'),
          sql<number>`count(*) filter (where m.failed_at is not null)`.as('failed'),
        ])
        .groupBy('m.endpoint_id')
        .execute();
      return new Map(rows.map((r) => [r.endpoint_id, { pending: Number(r.pending), delivered: Number(r.delivered), failed: Number(r.failed) }]));
    },
  };
}

export type WebhookMessagesRepo = ReturnType<typeof createWebhookMessagesRepo>;

// Data generators for the scale benchmarks: whole sets built inside
// PostgreSQL with generate_series (no row crosses the wire, no request per
// row). The per-row count triggers are switched off for the load
// (session_replication_role = replica, this session only), and the counts the
// API reads (room_counts, feedback_daily_counts) are recomputed for the tenants
// touched, in the same transaction: a reader never sees rows without counts.
// Tokens are md5 digests of (tenant, row number): unique, and of the shape the
// API accepts (32 characters of [0-9a-f]).
import type pg from 'pg';

const WHOLE_TENANT = '00000000-0000-0000-0000-000000000000';

export interface RoomPlan {
  tenantId: string;
  organizationId: string | null;
  /** Rooms to add, numbered after the `from` rooms this plan entry made before. */
  count: number;
  from: number;
}

type Progress = (line: string) => void;

/**
 * Adds rooms for several tenants, interleaved in id order as if they had been
 * created side by side (a tenant's rooms are spread over the whole table, the
 * realistic case for the (tenant_id, id) index and the heap).
 */
export async function generateRooms(client: pg.Client, plans: RoomPlan[], progress: Progress = () => {}): Promise<void> {
  const total = plans.reduce((n, p) => n + p.count, 0);
  const batches = Math.max(1, Math.ceil(total / 250_000));
  await client.query('begin');
  try {
    await client.query('set local session_replication_role = replica');
    for (let batch = 0; batch < batches; batch++) {
      const entries = plans.map((plan) => {
        const first = plan.from + Math.floor((plan.count * batch) / batches);
        const last = plan.from + Math.floor((plan.count * (batch + 1)) / batches);
        return { tenant_id: plan.tenantId, organization_id: plan.organizationId, first: first + 1, last };
      });
      await client.query(
        `insert into rooms (tenant_id, organization_id, token, access_token, guest_token, name, status,
           enable_chat, enable_screenshare, enable_invites, enable_audio_indicator, scheduled_at, meeting_duration,
           return_url, permanent, created_at, updated_at, cleanup_base_at)
         select e.tenant_id, e.organization_id,
           md5(e.tenant_id::text || coalesce(e.organization_id::text, '') || ':r' || g),
           md5(e.tenant_id::text || coalesce(e.organization_id::text, '') || ':a' || g),
           md5(e.tenant_id::text || coalesce(e.organization_id::text, '') || ':g' || g),
           'Consultation ' || g, 'active', true, true, true, true,
           -- Scheduled in the future: the cleanup job leaves these rooms alone during a run.
           now() + interval '30 days', 30, 'https://example.org/after', false, now(), now(), now() + interval '30 days'
         from jsonb_to_recordset($1::jsonb) as e(tenant_id uuid, organization_id uuid, first int, last int)
         cross join lateral generate_series(e.first, e.last) as g
         order by (g - e.first)::float8 / greatest(e.last - e.first + 1, 1), e.tenant_id`,
        [JSON.stringify(entries)],
      );
      progress(`rooms: batch ${batch + 1}/${batches}`);
    }
    const tenants = [...new Set(plans.map((p) => p.tenantId))];
    await client.query('delete from room_counts where tenant_id = any($1::uuid[])', [tenants]);
    await client.query(
      `insert into room_counts (tenant_id, organization_id, shard, count)
         select tenant_id, $2::uuid, 0, count(*) from rooms where tenant_id = any($1::uuid[]) group by tenant_id
         union all
         select tenant_id, organization_id, 0, count(*) from rooms
           where tenant_id = any($1::uuid[]) and organization_id is not null group by tenant_id, organization_id`,
      [tenants, WHOLE_TENANT],
    );
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
  // Fresh statistics and a visibility map, as autovacuum would leave them after such a load.
  await client.query('vacuum analyze rooms');
}

export interface FeedbackPlan {
  tenantId: string;
  count: number;
  /** Numbered after the `from` feedbacks this tenant got from the generator before. */
  from: number;
  /** Spread evenly over the days from `firstDay` (YYYY-MM-DD), oldest first. */
  firstDay: string;
  days: number;
}

/** Adds feedbacks (60% good, 20% neutral, 20% bad, one in four with a comment), one tenant at a time. */
export async function generateFeedback(client: pg.Client, plans: FeedbackPlan[], progress: Progress = () => {}): Promise<void> {
  await client.query('begin');
  try {
    await client.query('set local session_replication_role = replica');
    for (const plan of plans) {
      const chunk = 1_000_000;
      for (let start = 0; start < plan.count; start += chunk) {
        const end = Math.min(plan.count, start + chunk);
        await client.query(
          `insert into room_feedbacks (tenant_id, room_token, participant_token, rating, feedback, local_day, created_at)
           select $1::uuid, md5($1 || ':r' || (g / 3)), md5($1 || ':p' || g),
             (array['good', 'good', 'good', 'neutral', 'bad'])[1 + ((g::bigint * 7919) % 5)::int],
             case when g % 4 = 0 then 'Comment number ' || g end,
             d.day, d.day + make_interval(secs => (g::bigint * 37) % 86400)
           from generate_series($2::int, $3::int) as g
           cross join lateral (select $4::date + ((g - 1)::bigint * $5 / $6)::int as day) as d`,
          [plan.tenantId, plan.from + start + 1, plan.from + end, plan.firstDay, plan.days, plan.from + plan.count],
        );
        progress(`feedbacks: ${end.toLocaleString('en')} / ${plan.count.toLocaleString('en')}`);
      }
    }
    const tenants = [...new Set(plans.map((p) => p.tenantId))];
    await client.query('delete from feedback_daily_counts where tenant_id = any($1::uuid[])', [tenants]);
    await client.query(
      `insert into feedback_daily_counts (tenant_id, day, rating, shard, count)
         select tenant_id, local_day, rating, 0, count(*) from room_feedbacks
         where tenant_id = any($1::uuid[]) group by tenant_id, local_day, rating`,
      [tenants],
    );
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
  await client.query('vacuum analyze room_feedbacks');
}

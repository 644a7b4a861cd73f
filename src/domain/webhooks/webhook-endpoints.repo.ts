// Webhook endpoints in SQL; every query filters by tenant.
import type { Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { WebhookEndpointsTable } from '../../db/schema.js';

export type WebhookEndpointRow = Selectable<WebhookEndpointsTable>;

export function createWebhookEndpointsRepo(db: Db) {
  return {
    async insert(row: WebhookEndpointRow): Promise<WebhookEndpointRow> {
      return db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
    },

    /** Oldest first. */
    async list(tenantId: string): Promise<WebhookEndpointRow[]> {
      return db.selectFrom('webhook_endpoints').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at').orderBy('id').execute();
    },

    async count(tenantId: string): Promise<number> {
      const row = await db
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('tenant_id', '=', tenantId)
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },

    /** Deletes the endpoint and its undelivered messages (cascade); false when the tenant has none with this id. */
    async delete(tenantId: string, id: string): Promise<boolean> {
      const result = await db.deleteFrom('webhook_endpoints').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
  };
}

export type WebhookEndpointsRepo = ReturnType<typeof createWebhookEndpointsRepo>;

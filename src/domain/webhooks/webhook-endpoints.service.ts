// Managing webhook endpoints (docs/design.md, "Webhooks"; docs/webhooks.md): Instance tokens
// only, the secret shown once, targets refused when they point inside the
// server's own network (checked again at every delivery).
import { ForbiddenError, NotFoundError, UnprocessableError, ValidationError } from '../../errors.js';
import type { Principal } from '../auth/auth.service.js';
import type { Clock } from '../support/clock.js';
import type { Ids } from '../support/ids.js';
import type { TenantsRepo } from '../tenants/tenants.repo.js';
import { resolveTargetWithin } from './address-policy.js';
import type { WebhookEventType } from './webhook-events.js';
import type { WebhookEndpointRow, WebhookEndpointsRepo } from './webhook-endpoints.repo.js';
import type { WebhookMessagesRepo } from './webhook-messages.repo.js';
import { newWebhookSecret } from './webhook-signature.js';

export const WEBHOOKS_FORBIDDEN = 'Webhook endpoints are managed with Instance API tokens only';
/** Every endpoint gets every event it wants: many of them multiply each event's cost. */
const MAX_ENDPOINTS_PER_TENANT = 20;

interface WebhookEndpointInput {
  url: string;
  events?: WebhookEventType[];
  description?: string | null;
}

interface Deps {
  repo: WebhookEndpointsRepo;
  messages: WebhookMessagesRepo;
  tenants: TenantsRepo;
  clock: Clock;
  ids: Ids;
  allowPrivateNetworks: boolean;
}

function instanceOnly(principal: Principal): string {
  if (principal.kind !== 'instance') throw new ForbiddenError(WEBHOOKS_FORBIDDEN);
  return principal.tenantId;
}

export function createWebhookEndpointsService({ repo, messages, tenants, clock, ids, allowPrivateNetworks }: Deps) {
  /** What the schema cannot say about a URL: no credentials in it, and a host that is not internal. */
  async function checkUrl(raw: string): Promise<void> {
    const url = new URL(raw);
    if (url.username || url.password) throw ValidationError.of('url', 'invalid', 'must not contain a user name or password');
    // A name whose lookup takes more than 2 s is treated as not resolving yet (checked again at delivery).
    const target = await resolveTargetWithin(url, allowPrivateNetworks, 2000);
    // A name that does not resolve yet is accepted: it is resolved and checked again at each delivery.
    if ('refused' in target && target.refused.includes('internal')) {
      throw ValidationError.of('url', 'invalid', 'must not point to a loopback, private or link-local address');
    }
  }

  return {
    /** The new endpoint with its secret: the only time the secret is shown. */
    async create(principal: Principal, input: WebhookEndpointInput): Promise<WebhookEndpointRow> {
      const tenantId = instanceOnly(principal);
      await checkUrl(input.url);
      if ((await repo.count(tenantId)) >= MAX_ENDPOINTS_PER_TENANT) {
        throw new UnprocessableError(`A tenant has at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints; delete one first`);
      }
      return repo.insert({
        id: ids.uuid(),
        tenant_id: tenantId,
        url: input.url,
        events: input.events ? [...new Set(input.events)] : null,
        description: input.description?.trim() || null,
        secret: newWebhookSecret(),
        created_at: clock.now(),
        failing_since: null,
        disabled_at: null,
        disabled_reason: null,
      });
    },

    async list(principal: Principal): Promise<WebhookEndpointRow[]> {
      return repo.list(instanceOnly(principal));
    },

    /** For operators (the admin API): a tenant's endpoints with how many messages each has waiting, delivered and given up. */
    async listForTenant(tenantId: string) {
      if (!(await tenants.findTenant(tenantId))) throw new NotFoundError('Tenant not found');
      const [rows, counts] = await Promise.all([repo.list(tenantId), messages.countsByEndpoint(tenantId)]);
      return rows.map((row) => ({ row, messages: counts.get(row.id) ?? { pending: 0, delivered: 0, failed: 0 } }));
    },

    /** true when it existed; the routes answer 404 otherwise. */
    async delete(principal: Principal, id: string): Promise<boolean> {
      return repo.delete(instanceOnly(principal), id);
    },
  };
}

export type WebhookEndpointsService = ReturnType<typeof createWebhookEndpointsService>;

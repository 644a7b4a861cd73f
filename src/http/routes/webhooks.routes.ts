// Webhook endpoints (docs/design.md, "Webhooks"; docs/webhooks.md), for Instance tokens only (403 otherwise, as for feedback).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { UUID_PATTERN } from '../../domain/support/ids.js';
import type { WebhookEndpointRow } from '../../domain/webhooks/webhook-endpoints.repo.js';
import type { WebhookEventType } from '../../domain/webhooks/webhook-events.js';
import { WEBHOOKS_FORBIDDEN } from '../../domain/webhooks/webhook-endpoints.service.js';
import { NotFoundError } from '../../errors.js';
import type { Services } from '../../services.js';
import { instanceTokensOnly } from '../hooks/instance-only.js';
import {
  CreatedWebhookEndpointSchema,
  ErrorSchema,
  ValidationErrorsSchema,
  WebhookEndpointInputSchema,
  commonErrors,
} from '../schemas.js';

/** What every answer shows of an endpoint: never its secret. */
export function presentWebhookEndpoint(row: WebhookEndpointRow) {
  return {
    id: row.id,
    url: row.url,
    // Only the types of WEBHOOK_EVENT_TYPES get in: the create's schema checks them.
    events: row.events as WebhookEventType[] | null,
    description: row.description,
    created_at: row.created_at.toISOString(),
    status: row.disabled_at ? ('disabled' as const) : ('enabled' as const),
    failing_since: row.failing_since?.toISOString() ?? null,
    disabled_at: row.disabled_at?.toISOString() ?? null,
    disabled_reason: row.disabled_reason,
  };
}

export const webhooksRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = ['webhooks'];
    const security = [{ bearer: [] }];
    const errors = { 403: ErrorSchema, ...commonErrors };

    app.addHook('preValidation', instanceTokensOnly(WEBHOOKS_FORBIDDEN));

    app.post(
      '/api/webhook_endpoints',
      {
        schema: {
          tags,
          security,
          operationId: 'createWebhookEndpoint',
          summary: 'Add a webhook endpoint (the secret is shown only in this answer)',
          body: WebhookEndpointInputSchema,
          response: { 201: CreatedWebhookEndpointSchema, 400: ValidationErrorsSchema, 422: ErrorSchema, ...errors },
        },
      },
      async (request, reply) => {
        const row = await services.webhookEndpoints.create(request.principal, request.body);
        return reply
          .status(201)
          .header('Location', `${services.config.publicUrl}/api/webhook_endpoints/${row.id}`)
          .send({ ...presentWebhookEndpoint(row), secret: row.secret });
      },
    );

    app.get(
      '/api/webhook_endpoints',
      {
        schema: {
          tags,
          security,
          operationId: 'listWebhookEndpoints',
          summary: 'List webhook endpoints, oldest first, without their secrets',
          response: { 200: Type.Object({ webhook_endpoints: Type.Array(Type.Ref('WebhookEndpoint')) }), ...errors },
        },
      },
      async (request) => ({ webhook_endpoints: (await services.webhookEndpoints.list(request.principal)).map(presentWebhookEndpoint) }),
    );

    app.delete(
      '/api/webhook_endpoints/:id',
      {
        schema: {
          tags,
          security,
          operationId: 'deleteWebhookEndpoint',
          summary: 'Delete a webhook endpoint; its undelivered messages go with it',
          params: Type.Object({ id: Type.String({ maxLength: 200 }) }),
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        const { id } = request.params;
        if (!UUID_PATTERN.test(id) || !(await services.webhookEndpoints.delete(request.principal, id.toLowerCase()))) {
          throw new NotFoundError('Webhook endpoint not found');
        }
        return reply.status(204).send(null);
      },
    );
  };

// The operator admin API (docs/design.md#tenants-tokens-and-authentication). Registered only when PARLEY_ADMIN_TOKEN
// is set; otherwise every /admin path is an ordinary 404.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { NotFoundError, UnauthorizedError } from '../../errors.js';
import { parseBearer } from '../../domain/auth/auth.service.js';
import { UUID_PATTERN } from '../../domain/support/ids.js';
import { secretsEqual } from '../../domain/support/secrets.js';
import type { Services } from '../../services.js';
import { ErrorSchema, Nullable, ValidationErrorsSchema, WebhookEndpointSchema } from '../schemas.js';
import { presentWebhookEndpoint } from './webhooks.routes.js';
import { sfuAdminRoutes } from './admin-sfu.routes.js';

/** Ids are UUIDs; anything else names nothing (and never reaches a uuid column). */
function id(value: string, what: string): string {
  if (!UUID_PATTERN.test(value)) throw new NotFoundError(`${what} not found`);
  return value.toLowerCase();
}

const dateTime = Type.String({ format: 'date-time' });
const TenantSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  default_return_url: Type.String(),
  timezone: Type.String(),
  created_at: dateTime,
});
const name = Type.String({ maxLength: 255 });
const errors = { 400: ValidationErrorsSchema, 401: ErrorSchema, 404: ErrorSchema };

type App = Parameters<FastifyPluginAsyncTypebox>[0];
type Tenants = Services['tenants'];

const tags = ['admin'];
const security = [{ admin: [] }];
const tenantParams = Type.Object({ tenant_id: Type.String() });
const orgParams = Type.Object({ org_id: Type.String() });

export const adminRoutes =
  (services: Services, adminToken: string): FastifyPluginAsyncTypebox =>
  async (app) => {
    app.addHook('onRequest', async (request) => {
      const presented = parseBearer(request.headers.authorization);
      if (presented === null || !secretsEqual(presented, adminToken)) throw new UnauthorizedError('Missing or invalid admin token');
    });
    // In this order: the OpenAPI document (and the client generated from it) lists them so.
    tenantRoutes(app, services.tenants);
    organizationRoutes(app, services.tenants);
    tokenRoutes(app, services.tenants);
    frameAncestorRoutes(app, services.tenants);
    featureRoutes(app, services.tenants);
    webhookEndpointRoutes(app, services.webhookEndpoints);
    sfuAdminRoutes(app, services, tags, security);
  };

function tenantRoutes(app: App, tenants: Tenants): void {
  const presentTenant = (t: Awaited<ReturnType<Tenants['createTenant']>>) => ({ ...t, created_at: t.created_at.toISOString() });

  app.post(
    '/admin/tenants',
    {
      schema: {
        tags,
        security,
        operationId: 'adminCreateTenant',
        summary: 'Create a tenant',
        body: Type.Object({
          name,
          default_return_url: Type.Optional(Nullable(Type.String({ maxLength: 2048 }))),
          timezone: Type.Optional(Nullable(Type.String({ maxLength: 64 }))),
        }),
        response: { 201: TenantSchema, ...errors },
      },
    },
    async (request, reply) => reply.status(201).send(presentTenant(await tenants.createTenant(request.body))),
  );

  app.get(
    '/admin/tenants',
    { schema: { tags, security, operationId: 'adminListTenants', summary: 'List tenants', response: { 200: Type.Object({ tenants: Type.Array(TenantSchema) }), 401: ErrorSchema } } },
    async () => ({ tenants: (await tenants.listTenants()).map(presentTenant) }),
  );
}

function organizationRoutes(app: App, tenants: Tenants): void {
  app.post(
    '/admin/tenants/:tenant_id/organizations',
    {
      schema: {
        tags,
        security,
        operationId: 'adminCreateOrganization',
        summary: 'Create an organization',
        params: tenantParams,
        body: Type.Object({ name }),
        response: { 201: Type.Object({ id: Type.String(), tenant_id: Type.String(), name: Type.String() }), ...errors },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await tenants.createOrganization(id(request.params.tenant_id, 'Tenant'), request.body)),
  );

  app.post(
    '/admin/organizations/:org_id/doctors',
    {
      schema: {
        tags,
        security,
        operationId: 'adminCreateDoctor',
        summary: 'Create a doctor',
        params: orgParams,
        body: Type.Object({ name }),
        response: { 201: Type.Object({ id: Type.String(), organization_id: Type.String(), name: Type.String() }), ...errors },
      },
    },
    async (request, reply) =>
      reply.status(201).send(await tenants.createDoctor(id(request.params.org_id, 'Organization'), request.body)),
  );
}

function tokenRoutes(app: App, tenants: Tenants): void {
  app.post(
    '/admin/tenants/:tenant_id/tokens',
    {
      schema: {
        tags,
        security,
        operationId: 'adminIssueToken',
        summary: 'Issue an API token (shown only in this response)',
        params: tenantParams,
        body: Type.Object({
          organization_id: Type.Optional(Nullable(Type.String({ format: 'uuid' }))),
          label: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
        }),
        response: {
          201: Type.Object({
            id: Type.String(),
            token: Type.String(),
            kind: Type.Union([Type.Literal('instance'), Type.Literal('organization')]),
            organization_id: Nullable(Type.String()),
            label: Nullable(Type.String()),
            created_at: dateTime,
          }),
          ...errors,
        },
      },
      // No body at all is an instance token without a label (the schema wants an object).
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const issued = await tenants.issueToken(id(request.params.tenant_id, 'Tenant'), request.body);
      return reply.status(201).send({ ...issued, created_at: issued.created_at.toISOString() });
    },
  );

  app.delete(
    '/admin/tokens/:id',
    {
      schema: {
        tags,
        security,
        operationId: 'adminRevokeToken',
        summary: 'Revoke an API token',
        params: Type.Object({ id: Type.String() }),
        response: { 204: Type.Null(), 401: ErrorSchema, 404: ErrorSchema },
      },
    },
    async (request, reply) => {
      await tenants.revokeToken(id(request.params.id, 'Token'));
      return reply.status(204).send(null);
    },
  );
}

// Who may embed the tenant's join pages in an iframe: the pages' CSP frame-ancestors (docs/call.md "Embedding").
const frameAncestors = Type.Object({
  frame_ancestors: Type.Array(Type.String({ maxLength: 255 }), {
    maxItems: 100,
    description: 'Origins like https://app.example.com (https; http only for localhost). Empty: nobody may embed.',
  }),
});

function frameAncestorRoutes(app: App, tenants: Tenants): void {
  app.get(
    '/admin/tenants/:tenant_id/frame-ancestors',
    {
      schema: {
        tags,
        security,
        operationId: 'adminGetFrameAncestors',
        summary: "Origins that may embed the tenant's join pages",
        params: tenantParams,
        response: { 200: frameAncestors, 401: ErrorSchema, 404: ErrorSchema },
      },
    },
    async (request) => ({ frame_ancestors: await tenants.frameAncestors(id(request.params.tenant_id, 'Tenant')) }),
  );

  app.put(
    '/admin/tenants/:tenant_id/frame-ancestors',
    {
      schema: {
        tags,
        security,
        operationId: 'adminSetFrameAncestors',
        summary: "Set the origins that may embed the tenant's join pages (replaces the list)",
        params: tenantParams,
        body: frameAncestors,
        response: { 200: frameAncestors, ...errors },
      },
    },
    async (request) => ({
      frame_ancestors: await tenants.setFrameAncestors(id(request.params.tenant_id, 'Tenant'), request.body.frame_ancestors),
    }),
  );

  // An organization narrows the tenant's list for its rooms (docs/design.md, "Embedding"): the CSP and the pages' postMessage follow.
  const organizationAnswer = Type.Object({
    frame_ancestors: Nullable(Type.Array(Type.String(), { description: "The organization's own list; null: none, the tenant's applies." })),
    effective_frame_ancestors: Type.Array(Type.String(), {
      description: "What the organization's rooms allow: its list as far as the tenant's goes, else the tenant's.",
    }),
  });

  app.get(
    '/admin/organizations/:org_id/frame-ancestors',
    {
      schema: {
        tags,
        security,
        operationId: 'adminGetOrganizationFrameAncestors',
        summary: "An organization's narrowing of its tenant's embedding origins, and the list in effect",
        params: orgParams,
        response: { 200: organizationAnswer, 401: ErrorSchema, 404: ErrorSchema },
      },
    },
    async (request) => tenants.organizationFrameAncestors(id(request.params.org_id, 'Organization')),
  );

  app.put(
    '/admin/organizations/:org_id/frame-ancestors',
    {
      schema: {
        tags,
        security,
        operationId: 'adminSetOrganizationFrameAncestors',
        summary: "Narrow the tenant's embedding origins for an organization's rooms (null stops narrowing)",
        params: orgParams,
        body: Type.Object({
          frame_ancestors: Nullable(
            Type.Array(Type.String({ maxLength: 255 }), {
              maxItems: 100,
              description: "Origins of the tenant's list. Empty: nobody may embed the organization's rooms.",
            }),
          ),
        }),
        response: { 200: organizationAnswer, ...errors },
      },
    },
    async (request) => tenants.setOrganizationFrameAncestors(id(request.params.org_id, 'Organization'), request.body.frame_ancestors),
  );
}

const featureResponse = { 200: Type.Object({ feature: Type.String(), enabled: Nullable(Type.Boolean()) }), ...errors };

function featureRoutes(app: App, tenants: Tenants): void {
  app.put(
    '/admin/tenants/:tenant_id/features/:feature',
    {
      schema: {
        tags,
        security,
        operationId: 'adminSetTenantFeature',
        summary: "Switch a feature for a tenant",
        params: Type.Object({ tenant_id: Type.String(), feature: Type.String() }),
        body: Type.Object({ enabled: Type.Boolean() }),
        response: featureResponse,
      },
    },
    async (request) =>
      tenants.setTenantFeature(id(request.params.tenant_id, 'Tenant'), request.params.feature, request.body.enabled),
  );

  app.put(
    '/admin/organizations/:org_id/features/:feature',
    {
      schema: {
        tags,
        security,
        operationId: 'adminSetOrganizationFeature',
        summary: "Override a feature for an organization (null clears the override)",
        params: Type.Object({ org_id: Type.String(), feature: Type.String() }),
        body: Type.Object({ enabled: Nullable(Type.Boolean()) }),
        response: featureResponse,
      },
    },
    async (request) =>
      tenants.setOrganizationFeature(id(request.params.org_id, 'Organization'), request.params.feature, request.body.enabled),
  );
}

// Operators see a tenant's webhook endpoints (never their secrets) and how their deliveries go (docs/webhooks.md).
function webhookEndpointRoutes(app: App, webhookEndpoints: Services['webhookEndpoints']): void {
  app.get(
    '/admin/tenants/:tenant_id/webhook_endpoints',
    {
      schema: {
        tags,
        security,
        operationId: 'adminListWebhookEndpoints',
        summary: "A tenant's webhook endpoints, with their messages waiting, delivered and given up",
        params: tenantParams,
        response: {
          200: Type.Object({
            webhook_endpoints: Type.Array(
              Type.Object({
                ...WebhookEndpointSchema.properties,
                messages: Type.Object({ pending: Type.Integer(), delivered: Type.Integer(), failed: Type.Integer() }),
              }),
            ),
          }),
          401: ErrorSchema,
          404: ErrorSchema,
        },
      },
    },
    async (request) => ({
      webhook_endpoints: (await webhookEndpoints.listForTenant(id(request.params.tenant_id, 'Tenant'))).map(({ row, messages }) => ({
        ...presentWebhookEndpoint(row),
        messages,
      })),
    }),
  );
}

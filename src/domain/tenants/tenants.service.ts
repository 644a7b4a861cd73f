// Operator actions (docs/design.md#tenants-tokens-and-authentication): tenants, organizations, doctors, API tokens and
// feature toggles. Reached through the admin API and the `parley admin` CLI.
import { NotFoundError, ValidationError } from '../../errors.js';
import type { Clock } from '../support/clock.js';
import type { Ids } from '../support/ids.js';
import { hashSecret } from '../support/secrets.js';
import { canonicalTimezone } from '../support/timezone.js';
import { FieldErrors, checkName, checkUrl } from '../support/validate.js';
import { isFeature } from './features.js';
import { checkFrameAncestors, narrowed } from './frame-ancestors.js';
import type { Organization, TenantsRepo } from './tenants.repo.js';

export const API_TOKEN_PREFIX = 'prl_';

export interface IssuedToken {
  id: string;
  token: string;
  kind: 'instance' | 'organization';
  organization_id: string | null;
  label: string | null;
  created_at: Date;
}

export interface OrganizationFrameAncestors {
  /** The organization's own list, null where it has none. */
  frame_ancestors: string[] | null;
  /** What its rooms' pages allow: its list as far as the tenant's goes, else the tenant's. */
  effective_frame_ancestors: string[];
}

interface Deps {
  repo: TenantsRepo;
  ids: Ids;
  clock: Clock;
  /** Where guests go after a call when neither the room nor the tenant says otherwise. */
  fallbackReturnUrl: string;
  /** A token was revoked or a feature changed: what authentication remembers of tokens is stale. */
  onAccessChanged?: () => void;
}

export function createTenantsService({ repo, ids, clock, fallbackReturnUrl, onAccessChanged = () => {} }: Deps) {
  async function requireTenant(id: string) {
    const tenant = await repo.findTenant(id);
    if (!tenant) throw new NotFoundError('Tenant not found');
    return tenant;
  }

  async function requireOrganization(id: string) {
    const org = await repo.findOrganization(id);
    if (!org) throw new NotFoundError('Organization not found');
    return org;
  }

  function checkFeature(feature: string) {
    if (!isFeature(feature)) throw ValidationError.of('feature', 'inclusion', 'is not a known feature (permanent_rooms, additional_participants, recording)');
  }

  return {
    async createTenant(input: { name?: string; default_return_url?: string | null; timezone?: string | null }) {
      const errors = new FieldErrors();
      const name = checkName(errors, 'name', input.name, 255);
      checkUrl(errors, 'default_return_url', input.default_return_url);
      // Stored as Intl spells it, so that the tenant reads back the zone its days are counted in.
      const timezone = canonicalTimezone(input.timezone ?? 'UTC');
      if (timezone === null) errors.add('timezone', 'invalid', 'is not a known IANA time zone');
      if (errors.list.length || timezone === null) throw new ValidationError(errors.list);
      return repo.insertTenant({
        id: ids.uuid(),
        name,
        default_return_url: input.default_return_url ?? fallbackReturnUrl,
        timezone,
        created_at: clock.now(),
      });
    },

    listTenants: () => repo.listTenants(),

    async createOrganization(tenantId: string, input: { name?: string }) {
      await requireTenant(tenantId);
      const errors = new FieldErrors();
      const name = checkName(errors, 'name', input.name, 255);
      if (errors.list.length) throw new ValidationError(errors.list);
      return repo.insertOrganization({ id: ids.uuid(), tenant_id: tenantId, name, created_at: clock.now() });
    },

    async createDoctor(organizationId: string, input: { name?: string }) {
      const org = await requireOrganization(organizationId);
      const errors = new FieldErrors();
      const name = checkName(errors, 'name', input.name, 255);
      if (errors.list.length) throw new ValidationError(errors.list);
      return repo.insertDoctor({ id: ids.uuid(), tenant_id: org.tenant_id, organization_id: org.id, name, created_at: clock.now() });
    },

    async issueToken(tenantId: string, input: { organization_id?: string | null; label?: string | null }): Promise<IssuedToken> {
      await requireTenant(tenantId);
      const organizationId = input.organization_id ?? null;
      if (organizationId !== null) {
        const org = await repo.findOrganization(organizationId);
        if (!org || org.tenant_id !== tenantId) throw ValidationError.of('organization_id', 'invalid', 'is not an organization of this tenant');
      }
      const label = input.label?.trim() || null;
      if (label && label.length > 255) throw ValidationError.of('label', 'too_long', 'is too long (maximum is 255 characters)');
      const token = API_TOKEN_PREFIX + ids.secret(32);
      const row = {
        id: ids.uuid(),
        tenant_id: tenantId,
        organization_id: organizationId,
        label,
        token_hash: hashSecret(token),
        created_at: clock.now(),
        revoked_at: null,
      };
      await repo.insertToken(row);
      return {
        id: row.id,
        token,
        kind: organizationId ? 'organization' : 'instance',
        organization_id: organizationId,
        label,
        created_at: row.created_at,
      };
    },

    async revokeToken(id: string): Promise<void> {
      const revoked = await repo.revokeToken(id, clock.now());
      onAccessChanged();
      if (!revoked && !(await repo.tokenExists(id))) throw new NotFoundError('Token not found');
    },

    async setTenantFeature(tenantId: string, feature: string, enabled: boolean) {
      checkFeature(feature);
      await requireTenant(tenantId);
      await repo.setTenantFeature(tenantId, feature, enabled);
      onAccessChanged();
      return { feature, enabled };
    },

    async setOrganizationFeature(organizationId: string, feature: string, enabled: boolean | null) {
      checkFeature(feature);
      await requireOrganization(organizationId);
      await repo.setOrganizationFeature(organizationId, feature, enabled);
      onAccessChanged();
      return { feature, enabled };
    },

    /** The origins that may embed this tenant's join pages in an iframe (docs/call.md "Embedding"). */
    async frameAncestors(tenantId: string): Promise<string[]> {
      await requireTenant(tenantId);
      return repo.frameAncestors(tenantId);
    },

    async setFrameAncestors(tenantId: string, values: unknown): Promise<string[]> {
      const origins = checkFrameAncestors(values);
      await requireTenant(tenantId);
      await repo.setFrameAncestors(tenantId, origins);
      return origins;
    },

    ...embeddingOrigins(repo, requireOrganization),

    /**
     * First start on an empty database: create the tenant `default` with an
     * Instance API token, and return the token so it can be printed once.
     */
    async bootstrapDefaultTenant(): Promise<string | null> {
      if ((await repo.countTenants()) > 0) return null;
      // Nodes starting together on an empty database: only the one that claims the flag goes on.
      if (!(await repo.claimFlag('default-tenant-created', clock.now()))) return null;
      const tenant = await this.createTenant({ name: 'default' });
      return (await this.issueToken(tenant.id, { label: 'created at first start' })).token;
    },
  };
}

export type TenantsService = ReturnType<typeof createTenantsService>;

/**
 * Who may embed an organization's rooms, and whom their pages talk to
 * (docs/design.md, "Embedding"): the organization's narrowing of its tenant's
 * frame-ancestors.
 */
function embeddingOrigins(repo: TenantsRepo, requireOrganization: (id: string) => Promise<Organization>) {
  return {
    /** The organization's own list (null: it has none) and the list in effect for its rooms. */
    async organizationFrameAncestors(organizationId: string): Promise<OrganizationFrameAncestors> {
      const org = await requireOrganization(organizationId);
      const lists = await repo.embeddingLists(org.tenant_id, org.id);
      return { frame_ancestors: lists.organization, effective_frame_ancestors: narrowed(lists.tenant, lists.organization) };
    },

    /** Narrows (or, with null, stops narrowing) the tenant's list for an organization's rooms: only origins of the tenant's list. */
    async setOrganizationFrameAncestors(organizationId: string, values: unknown): Promise<OrganizationFrameAncestors> {
      const origins = values === null ? null : checkFrameAncestors(values);
      const org = await requireOrganization(organizationId);
      const tenant = await repo.frameAncestors(org.tenant_id);
      const outside = origins?.find((origin) => !tenant.includes(origin));
      if (outside !== undefined) {
        throw ValidationError.of('frame_ancestors', 'inclusion', `must be origins of the tenant's list, which an organization can only narrow: ${outside} is not on it`);
      }
      await repo.setOrganizationFrameAncestors(org.id, origins);
      return { frame_ancestors: origins, effective_frame_ancestors: narrowed(tenant, origins) };
    },

    /** The origins that may embed a room's join page, and the only ones the page talks to. */
    async embeddingOrigins(tenantId: string, organizationId: string | null): Promise<string[]> {
      const lists = await repo.embeddingLists(tenantId, organizationId);
      return narrowed(lists.tenant, lists.organization);
    },
  };
}

import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import { prepare } from '../../db/prepared.js';
import type { ApiTokensTable, DoctorsTable, OrganizationsTable, TenantsTable } from '../../db/schema.js';
import { perTurnBatches } from '../support/per-turn-batches.js';

/** A stored list of origins (single spaces; '' is none). */
const originList = (stored: string): string[] => (stored ? stored.split(' ') : []);

export type Tenant = TenantsTable;
export type Organization = OrganizationsTable;
export type Doctor = DoctorsTable;

/** An API token found by its digest, with what a request needs of its tenant. */
export interface ApiTokenWithTenant {
  id: string;
  token_hash: Uint8Array;
  tenant_id: string;
  organization_id: string | null;
  revoked_at: Date | null;
  timezone: string;
  default_return_url: string;
  /** Whether additional participants are on for the token's scope (featureEnabledSql). */
  additional_participants: boolean;
}

/**
 * Whether a feature is on for a caller, as an SQL expression: the
 * organization's setting where it has one, else the tenant's, else off. The
 * token lookup embeds it (with the token's columns for the ids), so that a
 * request carries its toggle instead of costing a query of its own. The
 * feature is a name from the code, written into the statement as a literal.
 */
export function featureEnabledSql(
  tenantId: string | RawBuilder<string>,
  organizationId: string | null | RawBuilder<string | null>,
  feature: string,
): RawBuilder<boolean> {
  return sql<boolean>`coalesce(
    (select enabled from organization_features where organization_id = ${organizationId} and feature = ${sql.lit(feature)}),
    (select enabled from tenant_features where tenant_id = ${tenantId} and feature = ${sql.lit(feature)}),
    false)`;
}

/**
 * The API tokens with these digests, each with its tenant and whether
 * additional participants are on for it: every room representation needs that
 * toggle, and read here it costs one lookup per token and event-loop turn
 * instead of two index scans in every room statement (bench/README.md,
 * "Issue 15: the caller's toggle with its token"). The tenant is a
 * lateral subquery with a LIMIT, which PostgreSQL never flattens into a join:
 * the plan reads each token's tenant by its primary key, whatever the number
 * of tenants. As a plain join, the generic plan (which guesses ten digests)
 * hashed the tokens found and read every tenant, a cost growing with the
 * tenants (bench/README.md, "the token lookup read every tenant").
 * test/api/named-statement-plans.test.ts checks the plan.
 */
export function tokensByDigest(db: Db, digests: Buffer[]) {
  return db
    .selectFrom('api_tokens as t')
    .innerJoinLateral(
      (eb) => eb.selectFrom('tenants').select(['timezone', 'default_return_url']).whereRef('tenants.id', '=', 't.tenant_id').limit(sql.lit(1)).as('tn'),
      (join) => join.onTrue(),
    )
    .select(['t.id', 't.token_hash', 't.tenant_id', 't.organization_id', 't.revoked_at', 'tn.timezone', 'tn.default_return_url'])
    .select(featureEnabledSql(sql.ref<string>('t.tenant_id'), sql.ref<string | null>('t.organization_id'), 'additional_participants').as('additional_participants'))
    .where('t.token_hash', '=', sql<Buffer>`any(${digests}::bytea[])`);
}

export function createTenantsRepo(db: Db) {
  // Every API request looks its token up: compiled once (db/prepared.ts), and one
  // statement for the lookups asked in the same turn of the event loop
  // (support/per-turn-batches.ts: none is answered from before its arrival).
  const findTokens = prepare(db, ({ digests }: { digests: Buffer[] }) => tokensByDigest(db, digests));
  const findTokenByDigest: (digest: Buffer) => Promise<ApiTokenWithTenant | undefined> = perTurnBatches(
    (digests: Buffer[]) => findTokens({ digests }),
    (row) => row.token_hash,
  );

  return {
    /** The API token with this digest (revoked ones too), or undefined. */
    findTokenByDigest,

    async insertTenant(tenant: Tenant): Promise<Tenant> {
      return db.insertInto('tenants').values(tenant).returningAll().executeTakeFirstOrThrow();
    },
    listTenants(): Promise<Tenant[]> {
      return db.selectFrom('tenants').selectAll().orderBy('created_at').orderBy('id').execute();
    },
    /** Sets a one-time flag; true for the one caller that set it. */
    async claimFlag(name: string, at: Date): Promise<boolean> {
      const result = await db
        .insertInto('instance_flags')
        .values({ name, set_at: at })
        .onConflict((oc) => oc.column('name').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    },
    async countTenants(): Promise<number> {
      const row = await db.selectFrom('tenants').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async findTenant(id: string): Promise<Tenant | null> {
      return (await db.selectFrom('tenants').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
    },
    async insertOrganization(org: Organization): Promise<Organization> {
      return db.insertInto('organizations').values(org).returningAll().executeTakeFirstOrThrow();
    },
    async findOrganization(id: string): Promise<Organization | null> {
      return (await db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;
    },
    async insertDoctor(doctor: Doctor): Promise<Doctor> {
      return db.insertInto('doctors').values(doctor).returningAll().executeTakeFirstOrThrow();
    },
    async findDoctor(tenantId: string, id: string): Promise<Doctor | null> {
      return (
        (await db.selectFrom('doctors').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst()) ?? null
      );
    },
    async insertToken(token: ApiTokensTable): Promise<void> {
      await db.insertInto('api_tokens').values(token).execute();
    },
    /** Marks a token revoked; false when there is no such live token. */
    async revokeToken(id: string, at: Date): Promise<boolean> {
      const result = await db
        .updateTable('api_tokens')
        .set({ revoked_at: at })
        .where('id', '=', id)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async tokenExists(id: string): Promise<boolean> {
      return (await db.selectFrom('api_tokens').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
    },
    async setTenantFeature(tenantId: string, feature: string, enabled: boolean): Promise<void> {
      await db
        .insertInto('tenant_features')
        .values({ tenant_id: tenantId, feature, enabled })
        .onConflict((oc) => oc.columns(['tenant_id', 'feature']).doUpdateSet({ enabled }))
        .execute();
    },
    async setOrganizationFeature(organizationId: string, feature: string, enabled: boolean | null): Promise<void> {
      if (enabled === null) {
        await db.deleteFrom('organization_features').where('organization_id', '=', organizationId).where('feature', '=', feature).execute();
        return;
      }
      await db
        .insertInto('organization_features')
        .values({ organization_id: organizationId, feature, enabled })
        .onConflict((oc) => oc.columns(['organization_id', 'feature']).doUpdateSet({ enabled }))
        .execute();
    },
    /** The origins that may embed the tenant's join pages (empty: none). */
    async frameAncestors(tenantId: string): Promise<string[]> {
      const row = await db.selectFrom('tenant_frame_ancestors').select('origins').where('tenant_id', '=', tenantId).executeTakeFirst();
      return originList(row?.origins ?? '');
    },
    async setFrameAncestors(tenantId: string, origins: string[]): Promise<void> {
      const value = origins.join(' ');
      await db
        .insertInto('tenant_frame_ancestors')
        .values({ tenant_id: tenantId, origins: value })
        .onConflict((oc) => oc.column('tenant_id').doUpdateSet({ origins: value }))
        .execute();
    },
    /** The organization's narrowing of its tenant's list, or null where it has none (0015). */
    async organizationFrameAncestors(organizationId: string): Promise<string[] | null> {
      const row = await db.selectFrom('organization_frame_ancestors').select('origins').where('organization_id', '=', organizationId).executeTakeFirst();
      return row ? originList(row.origins) : null;
    },
    /** Sets the organization's narrowing; null removes it (the tenant's list applies again). */
    async setOrganizationFrameAncestors(organizationId: string, origins: string[] | null): Promise<void> {
      if (origins === null) {
        await db.deleteFrom('organization_frame_ancestors').where('organization_id', '=', organizationId).execute();
        return;
      }
      const value = origins.join(' ');
      await db
        .insertInto('organization_frame_ancestors')
        .values({ organization_id: organizationId, origins: value })
        .onConflict((oc) => oc.column('organization_id').doUpdateSet({ origins: value }))
        .execute();
    },
    /**
     * A room's two lists in one statement (the join page asks on every load):
     * the tenant's, and its organization's narrowing (null: none, or a room of no organization).
     */
    async embeddingLists(tenantId: string, organizationId: string | null): Promise<{ tenant: string[]; organization: string[] | null }> {
      const row = await db
        .selectNoFrom((eb) => [
          eb.selectFrom('tenant_frame_ancestors').select('origins').where('tenant_id', '=', tenantId).as('tenant'),
          organizationId === null
            ? sql<string | null>`null`.as('organization')
            : eb.selectFrom('organization_frame_ancestors').select('origins').where('organization_id', '=', organizationId).as('organization'),
        ])
        .executeTakeFirstOrThrow();
      return { tenant: originList(row.tenant ?? ''), organization: row.organization === null ? null : originList(row.organization) };
    },
    /** The organization's setting where it has one, else the tenant's, else off. */
    async featureEnabled(tenantId: string, organizationId: string | null, feature: string): Promise<boolean> {
      const row = await db.selectNoFrom(featureEnabledSql(tenantId, organizationId, feature).as('enabled')).executeTakeFirstOrThrow();
      return row.enabled;
    },
  };
}

export type TenantsRepo = ReturnType<typeof createTenantsRepo>;

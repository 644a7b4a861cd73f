import type { Db } from '../../db/client.js';
import type { ApiTokensTable, DoctorsTable, OrganizationsTable, TenantsTable } from '../../db/schema.js';

export type Tenant = TenantsTable;
export type Organization = OrganizationsTable;
export type Doctor = DoctorsTable;

export function createTenantsRepo(db: Db) {
  return {
    async insertTenant(tenant: Tenant): Promise<Tenant> {
      return db.insertInto('tenants').values(tenant).returningAll().executeTakeFirstOrThrow();
    },
    listTenants(): Promise<Tenant[]> {
      return db.selectFrom('tenants').selectAll().orderBy('created_at').orderBy('id').execute();
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
    /** The organization's setting where it has one, else the tenant's, else off. */
    async featureEnabled(tenantId: string, organizationId: string | null, feature: string): Promise<boolean> {
      const tenantRow = db
        .selectFrom('tenant_features')
        .select('enabled')
        .where('tenant_id', '=', tenantId)
        .where('feature', '=', feature);
      if (organizationId === null) return (await tenantRow.executeTakeFirst())?.enabled ?? false;
      const row = await db
        .selectNoFrom((eb) => [
          eb
            .selectFrom('organization_features')
            .select('enabled')
            .where('organization_id', '=', organizationId)
            .where('feature', '=', feature)
            .as('org'),
          tenantRow.as('tenant'),
        ])
        .executeTakeFirstOrThrow();
      return row.org ?? row.tenant ?? false;
    },
  };
}

export type TenantsRepo = ReturnType<typeof createTenantsRepo>;

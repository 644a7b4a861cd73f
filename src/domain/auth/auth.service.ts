// API token authentication (§5): `Authorization: Bearer <token>`. The token is
// hashed and looked up by digest; revoked and unknown tokens are both 401.
import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { prepare } from '../../db/prepared.js';
import { UnauthorizedError } from '../../errors.js';
import { perTurnBatches } from '../support/per-turn-batches.js';
import { digestsEqual, hashSecret } from '../support/secrets.js';
import { API_TOKEN_PREFIX } from '../tenants/tenants.service.js';

export interface Principal {
  tokenId: string;
  kind: 'instance' | 'organization';
  tenantId: string;
  organizationId: string | null;
  tenantTimezone: string;
  tenantReturnUrl: string;
}

// prl_ + 43 base64url characters; anything else cannot be a token we issued.
const API_TOKEN_SHAPE = new RegExp(`^${API_TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`);

export function parseBearer(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

export function createAuthService({ db }: { db: Db }) {
  // Every API request makes this lookup: compiled once (db/prepared.ts), and one
  // statement for the requests that arrive in the same turn of the event loop
  // (per-turn-batches.ts: none is answered from before its arrival).
  const findTokens = prepare(db, ({ digests }: { digests: Buffer[] }) =>
    db
      .selectFrom('api_tokens as t')
      .innerJoin('tenants as tn', 'tn.id', 't.tenant_id')
      .select(['t.id', 't.token_hash', 't.tenant_id', 't.organization_id', 't.revoked_at', 'tn.timezone', 'tn.default_return_url'])
      .where('t.token_hash', '=', sql<Buffer>`any(${digests}::bytea[])`),
  );
  const findToken = perTurnBatches((digests: Buffer[]) => findTokens({ digests }), (row) => row.token_hash);
  return {
    async authenticate(authorization: string | undefined): Promise<Principal> {
      const token = parseBearer(authorization);
      if (token === null || !API_TOKEN_SHAPE.test(token)) throw new UnauthorizedError();
      const digest = hashSecret(token);
      const row = await findToken(digest);
      if (!row || row.revoked_at !== null || !digestsEqual(row.token_hash, digest)) throw new UnauthorizedError();
      return {
        tokenId: row.id,
        kind: row.organization_id ? 'organization' : 'instance',
        tenantId: row.tenant_id,
        organizationId: row.organization_id,
        tenantTimezone: row.timezone,
        tenantReturnUrl: row.default_return_url,
      };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;

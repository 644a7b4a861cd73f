// API token authentication (docs/design.md#tenants-tokens-and-authentication): `Authorization: Bearer <token>`. The token is
// hashed and looked up by digest; revoked and unknown tokens are both 401.
import { UnauthorizedError } from '../../errors.js';
import { digestsEqual, hashSecret } from '../support/secrets.js';
import type { TenantsRepo } from '../tenants/tenants.repo.js';
import { API_TOKEN_PREFIX } from '../tenants/tenants.service.js';

export interface Principal {
  tokenId: string;
  kind: 'instance' | 'organization';
  tenantId: string;
  organizationId: string | null;
  tenantTimezone: string;
  tenantReturnUrl: string;
  /** Whether additional participants are on for this token's scope, as its lookup found it. */
  additionalParticipants: boolean;
}

// prl_ + 43 base64url characters; anything else cannot be a token we issued.
const API_TOKEN_SHAPE = new RegExp(`^${API_TOKEN_PREFIX}[A-Za-z0-9_-]{43}$`);

export function parseBearer(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

export function createAuthService({ tokens }: { tokens: Pick<TenantsRepo, 'findTokenByDigest'> }) {
  return {
    async authenticate(authorization: string | undefined): Promise<Principal> {
      const token = parseBearer(authorization);
      if (token === null || !API_TOKEN_SHAPE.test(token)) throw new UnauthorizedError();
      const digest = hashSecret(token);
      const row = await tokens.findTokenByDigest(digest);
      if (!row || row.revoked_at !== null || !digestsEqual(row.token_hash, digest)) throw new UnauthorizedError();
      return {
        tokenId: row.id,
        kind: row.organization_id ? 'organization' : 'instance',
        tenantId: row.tenant_id,
        organizationId: row.organization_id,
        tenantTimezone: row.timezone,
        tenantReturnUrl: row.default_return_url,
        additionalParticipants: row.additional_participants,
      };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;

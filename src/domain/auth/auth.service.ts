// API token authentication (docs/design.md#tenants-tokens-and-authentication): `Authorization: Bearer <token>`. The token is
// hashed and looked up by digest; revoked and unknown tokens are both 401.
// A token found valid is remembered for a second (docs/design.md, "Tenants,
// tokens and authentication": the principal cache), so that an integrator's
// burst of reads costs one lookup a second, not one a request.
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

/** How long a token found valid is taken as valid without asking the database again (on other nodes, a revocation's delay). */
export const PRINCIPAL_CACHE_MS = 1000;
/** Tokens remembered at most: beyond, the cache starts afresh (integrators hold a few tokens, not thousands). */
const PRINCIPAL_CACHE_SIZE = 10_000;

interface AuthDeps {
  tokens: Pick<TenantsRepo, 'findTokenByDigest'>;
  /** A monotonic clock in ms; the cache's age is not the domain's time (a manual clock in tests must not freeze it). */
  monotonicNow?: () => number;
}

export function createAuthService({ tokens, monotonicNow = () => performance.now() }: AuthDeps) {
  /** Principals of tokens found valid, by digest (hex), with when they were read. */
  let remembered = new Map<string, { principal: Principal; readAt: number }>();
  /** Counts forgetAll calls: a lookup that began before one is not remembered (it may have read the token before its revocation). */
  let generation = 0;

  async function lookUp(digest: Buffer): Promise<Principal> {
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
  }

  return {
    async authenticate(authorization: string | undefined): Promise<Principal> {
      const token = parseBearer(authorization);
      if (token === null || !API_TOKEN_SHAPE.test(token)) throw new UnauthorizedError();
      const digest = hashSecret(token);
      const key = digest.toString('hex');
      const now = monotonicNow();
      const known = remembered.get(key);
      if (known && now - known.readAt < PRINCIPAL_CACHE_MS) return known.principal;
      const startedIn = generation;
      const principal = await lookUp(digest);
      if (startedIn !== generation) return principal;
      if (remembered.size >= PRINCIPAL_CACHE_SIZE) remembered = new Map();
      remembered.set(key, { principal, readAt: now });
      return principal;
    },

    /** A token was revoked or a feature changed on this node: nothing remembered is used again. */
    forgetAll(): void {
      generation += 1;
      remembered = new Map();
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;

// The principal cache of authentication (docs/design.md, "Tenants, tokens and
// authentication"): a valid token is read once a second, a revocation on this
// node is seen at once, and a lookup that raced a revocation is not kept.
import { describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../../errors.js';
import { hashSecret } from '../support/secrets.js';
import { createAuthService, PRINCIPAL_CACHE_MS } from './auth.service.js';

const TOKEN = `prl_${'a'.repeat(43)}`;
const OTHER = `prl_${'b'.repeat(43)}`;

function fakeTokens() {
  const revoked = new Set<string>();
  let lookups = 0;
  let gate: Promise<void> | null = null;
  const tokens = {
    async findTokenByDigest(digest: Buffer) {
      lookups += 1;
      const hex = digest.toString('hex');
      const wasRevoked = revoked.has(hex);
      if (gate) await gate;
      if (hex !== hashSecret(TOKEN).toString('hex')) return undefined;
      return {
        id: 'token-1',
        tenant_id: 'tenant-1',
        organization_id: null,
        token_hash: digest,
        revoked_at: wasRevoked ? new Date() : null,
        timezone: 'UTC',
        default_return_url: 'https://example.test/',
        additional_participants: false,
      };
    },
  };
  return {
    tokens: tokens as never,
    revoke: () => revoked.add(hashSecret(TOKEN).toString('hex')),
    lookups: () => lookups,
    hold: () => {
      let release = () => {};
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = null;
        release();
      };
    },
  };
}

describe('authentication remembers valid tokens for a second', () => {
  it('reads a valid token once within the second and again after it', async () => {
    const repo = fakeTokens();
    let now = 0;
    const auth = createAuthService({ tokens: repo.tokens, monotonicNow: () => now });
    expect((await auth.authenticate(`Bearer ${TOKEN}`)).tokenId).toBe('token-1');
    now = PRINCIPAL_CACHE_MS - 1;
    await auth.authenticate(`Bearer ${TOKEN}`);
    expect(repo.lookups()).toBe(1);
    now = PRINCIPAL_CACHE_MS;
    await auth.authenticate(`Bearer ${TOKEN}`);
    expect(repo.lookups()).toBe(2);
  });

  it('never remembers an unknown token', async () => {
    const repo = fakeTokens();
    const auth = createAuthService({ tokens: repo.tokens, monotonicNow: () => 0 });
    for (let i = 0; i < 3; i++) await expect(auth.authenticate(`Bearer ${OTHER}`)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(repo.lookups()).toBe(3);
  });

  it('refuses a token revoked on this node at once', async () => {
    const repo = fakeTokens();
    const auth = createAuthService({ tokens: repo.tokens, monotonicNow: () => 0 });
    await auth.authenticate(`Bearer ${TOKEN}`);
    repo.revoke();
    auth.forgetAll();
    await expect(auth.authenticate(`Bearer ${TOKEN}`)).rejects.toBeInstanceOf(UnauthorizedError);
  });

  it('does not keep a lookup that began before a revocation', async () => {
    const repo = fakeTokens();
    const auth = createAuthService({ tokens: repo.tokens, monotonicNow: () => 0 });
    const release = repo.hold();
    const racing = auth.authenticate(`Bearer ${TOKEN}`);
    repo.revoke();
    auth.forgetAll();
    release();
    await racing; // read before the revocation: this request passes, as it would have without a cache
    await expect(auth.authenticate(`Bearer ${TOKEN}`)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(repo.lookups()).toBe(2);
  });
});

// Randomness, injected so that tests can control it. Every secret comes from
// the CSPRNG; 32 random bytes (256 bits) are far beyond guessing.
import { randomBytes, randomUUID } from 'node:crypto';

export interface Ids {
  uuid(): string;
  /** An unguessable URL-safe token of `bytes` random bytes. */
  secret(bytes?: number): string;
}

export const cryptoIds: Ids = {
  uuid: () => randomUUID(),
  secret: (bytes = 32) => randomBytes(bytes).toString('base64url'),
};

/** A UUID as the uuid columns take it (Ajv's format also accepts a "urn:uuid:" prefix, which they do not). */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The shape every generated token has: used to reject malformed tokens before any lookup. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;

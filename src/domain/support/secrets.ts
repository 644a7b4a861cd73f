// API tokens are shown once and stored only as SHA-256 digests. A digest
// lookup through a unique index, then a constant-time comparison of digests.
import { createHash, timingSafeEqual } from 'node:crypto';

export function hashSecret(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashSecret(a), hashSecret(b));
}

export function digestsEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

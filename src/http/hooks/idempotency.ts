// The HTTP side of Idempotency-Key on POST /api/rooms (the domain side is
// src/domain/idempotency): reading the header, and the request fingerprint
// that tells a retry (same request) from a reused key (another request).
import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../../errors.js';
import { RoomInputSchema } from '../schemas.js';

const MAX_KEY_LENGTH = 255;

/**
 * The Idempotency-Key header: 1..255 visible ASCII characters, optionally in
 * double quotes (the draft standard writes it as a structured-field string;
 * most clients send it bare). Undefined when absent; anything else is 400.
 */
export function idempotencyKey(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  const raw = String(header).trim();
  const key = /^"[^"]*"$/.test(raw) ? raw.slice(1, -1) : raw;
  if (key === '') throw ValidationError.of('Idempotency-Key', 'blank', "can't be blank");
  if (key.length > MAX_KEY_LENGTH) {
    throw ValidationError.of('Idempotency-Key', 'too_long', `is too long (maximum is ${MAX_KEY_LENGTH} characters)`);
  }
  if (!/^[\x21-\x7e]+$/.test(key)) throw ValidationError.of('Idempotency-Key', 'invalid', 'must be visible ASCII characters');
  return key;
}

// The fields a create reads, in the schema's order; unknown fields are ignored (docs/design.md#rooms), so they do not count.
const FIELDS = Object.keys(RoomInputSchema.properties);

/**
 * SHA-256 over the fields the create reads. Their values are JSON scalars
 * (the schema has checked them), so this never walks client-chosen nesting.
 */
export function roomRequestFingerprint(body: Record<string, unknown>): Buffer {
  const values = FIELDS.map((field) => (Object.hasOwn(body, field) ? body[field] : '\u0000absent'));
  return createHash('sha256').update(JSON.stringify(values)).digest();
}

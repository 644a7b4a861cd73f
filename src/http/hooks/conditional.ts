// Conditional requests on rooms (RFC 9110 §8.8.3 ETag, §13.1.1 If-Match).
// A room's ETag is its version, a number the database bumps whenever the
// room's representation changes; If-Match on PUT, DELETE and close turns into
// "version IN (...)" in the statement's WHERE, so the check and the write are
// one atomic step (two writers that read the same version: one wins, one 412s).
import type { FastifyRequest } from 'fastify';
import { ValidationError } from '../../errors.js';

export function etagOf(version: number): string {
  return `"${version}"`;
}

// One entity-tag of a list: optional W/, then a quoted opaque tag (no DQUOTE inside).
const ENTITY_TAG = /\s*(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"\s*(?:,|$)/y;

/**
 * The versions an If-Match header accepts: undefined when the header is absent
 * or `*` (any current room), else the strong tags that name a version. Weak
 * tags never match (If-Match compares strongly), and tags that are not ours
 * match nothing, so the write fails with 412. A header that is not a list of
 * entity-tags is a 400 on If-Match.
 */
export function ifMatchVersions(request: FastifyRequest): number[] | undefined {
  const header = request.headers['if-match'];
  if (header === undefined) return undefined;
  const value = header.trim();
  if (value === '') throw ValidationError.of('If-Match', 'blank', "can't be blank");
  if (value === '*') return undefined;
  const versions: number[] = [];
  ENTITY_TAG.lastIndex = 0;
  while (ENTITY_TAG.lastIndex < value.length) {
    const start = ENTITY_TAG.lastIndex;
    const match = ENTITY_TAG.exec(value);
    if (!match || ENTITY_TAG.lastIndex === start) {
      throw ValidationError.of('If-Match', 'invalid', 'must be * or a list of entity tags such as "3"');
    }
    // Nine digits at most: a version is a PostgreSQL integer, and a bigger number is not one of ours.
    if (!match[1] && /^[1-9]\d{0,8}$/.test(match[2]!)) versions.push(Number(match[2]));
  }
  return versions;
}

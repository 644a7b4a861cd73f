// Which sites may show a tenant's join pages in an iframe: the CSP
// `frame-ancestors` of those pages (docs/call.md "Embedding"), and the only
// origins the pages talk to over postMessage (docs/embedding.md). Each entry is
// an origin an integrator embeds the call in. The list goes verbatim into a
// response header, so an entry is accepted only in a form that cannot carry
// anything else (no `;`, space, quote, wildcard or path).
import { ValidationError } from '../../errors.js';

export const MAX_FRAME_ANCESTORS = 10;
const MAX_ORIGIN_LENGTH = 255;

/** Hosts that may embed over plain http: a developer's own machine (browsers treat them as secure contexts too). */
const LOOPBACK = new Set(['localhost', '127.0.0.1']);

/** A DNS name or IPv4 address as a CSP host-source allows it (CSP3 §2.3.1: no IPv6 literals, no underscores). */
const HOST = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** The canonical origin (`https://app.example.com[:port]`) of an entry, or null when it is not an acceptable one. */
export function frameAncestorOrigin(value: unknown): string | null {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ORIGIN_LENGTH) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  const secure = url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
  if (!secure || !HOST.test(url.hostname)) return null;
  // An origin only: a path, query, fragment or credentials would mean the integrator meant something else.
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/' || /[?#]$/.test(value)) return null;
  return url.origin;
}

/** Validates and canonicalises a whole list (duplicates removed, order kept); 400 on `frame_ancestors` otherwise. */
export function checkFrameAncestors(values: unknown): string[] {
  if (!Array.isArray(values)) throw ValidationError.of('frame_ancestors', 'invalid', 'must be an array of https origins');
  if (values.length > MAX_FRAME_ANCESTORS) {
    throw ValidationError.of('frame_ancestors', 'too_long', `is too long (maximum is ${MAX_FRAME_ANCESTORS} origins)`);
  }
  const origins = values.map(frameAncestorOrigin);
  const bad = values.find((_, i) => origins[i] === null);
  if (bad !== undefined) {
    const shown = typeof bad === 'string' ? JSON.stringify(bad.slice(0, 80)) : typeof bad;
    throw ValidationError.of(
      'frame_ancestors',
      'invalid',
      `must hold origins like https://app.example.com (https, no path; http only for localhost): ${shown} is not one`,
    );
  }
  return [...new Set(origins as string[])];
}

/**
 * The origins in effect for an organization's rooms (docs/design.md,
 * "Embedding"): its own list where it has one, but only as far as its
 * tenant's goes (a tenant that drops an origin drops it for every
 * organization); the tenant's list where it has none.
 */
export function narrowed(tenant: readonly string[], organization: readonly string[] | null): string[] {
  return organization === null ? [...tenant] : organization.filter((origin) => tenant.includes(origin));
}

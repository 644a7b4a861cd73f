// Response headers of the JSON APIs (/api, /admin). Room responses carry host
// access tokens and join URLs, which are secrets: no cache may keep them and
// no browser may treat them as anything but data. The join pages set their own
// policy (strict CSP, frame-ancestors per tenant), so this hook leaves them alone.
import type { FastifyReply, FastifyRequest } from 'fastify';

const API_HEADERS: Record<string, string> = {
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  // A JSON answer opened in a browser runs nothing and embeds in nothing.
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
};

export function isApiPath(url: string): boolean {
  return /^\/(api|admin)(\/|\?|$)/.test(url);
}

// Callback style, like the other hooks that never wait: an async hook costs every request a promise.
export function apiSecurityHeaders(request: FastifyRequest, reply: FastifyReply, done: () => void) {
  if (isApiPath(request.url)) reply.headers(API_HEADERS);
  done();
}

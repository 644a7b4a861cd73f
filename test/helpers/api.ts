// REST API support for the tests over createTestContext (app.ts): room
// creation, Link parsing, and the documented shapes of error answers (the
// interface's shapes, docs/design.md#errors-and-limits): the expect* assertions for one answer, and
// documentedShapeProblem / checkedRequest, the check the property tests put
// every answer through.
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { roomBody, type TestContext } from './app.js';

export interface Room {
  token: string;
  name: string;
  status: string;
  access_token: string;
  guest_token: string;
  [field: string]: unknown;
}

export async function createRoom(ctx: TestContext, token: string, overrides: Record<string, unknown> = {}): Promise<Room> {
  const res = await ctx.request({ method: 'POST', url: '/api/rooms', token, payload: roomBody(overrides) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as Room;
}

/**
 * A REST call over real HTTP (fetch) to a listening server (a process, a
 * browser test's server, a cluster node): JSON body in, JSON out (null when
 * the answer has no body).
 */
export async function httpJson(base: string, token: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  try {
    return { status: res.status, json: text ? JSON.parse(text) : null };
  } catch {
    throw new Error(`${method} ${path}: ${res.status} with a body that is not JSON: ${text.slice(0, 200)}`);
  }
}

/** RFC 8288 Link header -> { rel: url }. */
export function parseLinks(header: string | string[] | undefined): Record<string, string> {
  const links: Record<string, string> = {};
  const text = Array.isArray(header) ? header.join(', ') : (header ?? '');
  for (const match of text.matchAll(/<([^>]*)>\s*;\s*rel="([^"]+)"/g)) links[match[2]!] = match[1]!;
  return links;
}

/** The path and query of an absolute Link URL, for ctx.request. */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/** No 5xx, JSON errors in the documented shape: 400 an array of {attribute,type,message}; other errors {error}. */
export function documentedShapeProblem(res: LightMyRequestResponse, method = 'GET'): string | null {
  if (res.statusCode >= 500) return `status ${res.statusCode}: ${res.body.slice(0, 300)}`;
  if (res.statusCode < 400 || method === 'HEAD') return null;
  return errorBodyProblem(res);
}

/** Why an error answer's body is not in the documented shape for its status, or null when it is. */
export function errorBodyProblem(res: LightMyRequestResponse): string | null {
  if (!/^application\/json/.test(String(res.headers['content-type']))) return `error without a JSON content type: ${res.headers['content-type']}`;
  let body: unknown;
  try {
    body = JSON.parse(res.body);
  } catch {
    return `error body is not JSON: ${res.body.slice(0, 200)}`;
  }
  if (res.statusCode === 400) {
    if (!Array.isArray(body) || body.length === 0) return `400 body is not a non-empty array: ${res.body.slice(0, 200)}`;
    for (const item of body) {
      const keys = item && typeof item === 'object' ? Object.keys(item).sort().join(',') : '';
      if (keys !== 'attribute,message,type') return `400 item has keys ${keys}`;
      if (!Object.values(item as object).every((v) => typeof v === 'string' && v.length > 0)) return `400 item with an empty or non-string value`;
    }
    return null;
  }
  const keys = body && typeof body === 'object' && !Array.isArray(body) ? Object.keys(body).join(',') : '';
  if (keys !== 'error' || typeof (body as { error: unknown }).error !== 'string') return `${res.statusCode} body is not {error}: ${res.body.slice(0, 200)}`;
  return null;
}

/**
 * Fails the property (with the reason) when an answer breaks the contract; bounded in time, so a hang
 * fails too (with the request that hung, not the test's limit). One request takes milliseconds; 15 s
 * is far above that on a loaded machine (whose stalls last 1-3 s), and only a hang misses it.
 */
export async function checkedRequest(ctx: TestContext, options: Parameters<TestContext['request']>[0], limitMs = 15_000): Promise<LightMyRequestResponse> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${limitMs} ms: ${options.method} ${String(options.url).slice(0, 200)}`)), limitMs);
  });
  try {
    const res = await Promise.race([ctx.request(options), stalled]);
    const problem = documentedShapeProblem(res, String(options.method ?? 'GET'));
    if (problem) throw new Error(`${options.method} ${String(options.url).slice(0, 200)} -> ${problem}`);
    return res;
  } finally {
    clearTimeout(timer);
  }
}

/** A path segment for any string, lone surrogates included (encodeURIComponent throws on those). */
export function percentEncoded(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  }
}

/** A 400 in the documented shape whose errors are exactly `expected` (attribute -> type). */
export function expectFieldErrors(res: LightMyRequestResponse, expected: Record<string, string>): void {
  expect(res.statusCode, res.body).toBe(400);
  expect(errorBodyProblem(res)).toBeNull();
  const body = res.json() as { attribute: string; type: string; message: string }[];
  expect(Object.fromEntries(body.map((e) => [e.attribute, e.type]))).toEqual(expected);
}

/** An error answer of `status` in the documented shape {error}; returns its message. */
export function expectError(res: LightMyRequestResponse, status: number): string {
  expect(res.statusCode, res.body).toBe(status);
  expect(errorBodyProblem(res)).toBeNull();
  return (res.json() as { error: string }).error;
}

export function expectUnauthorized(res: LightMyRequestResponse): void {
  expectError(res, 401);
  expect(res.headers['www-authenticate']).toBe('Bearer');
}

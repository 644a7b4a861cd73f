// Helpers shared by the API test files: room creation, Link parsing, and the
// assertions every error response must satisfy (the interface's §7 shapes).
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { roomBody, type TestContext } from '../helpers/app.js';

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

export function expectFieldErrors(res: LightMyRequestResponse, expected: Record<string, string>): void {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json() as { attribute: string; type: string; message: string }[];
  expect(Array.isArray(body)).toBe(true);
  for (const error of body) {
    expect(Object.keys(error).sort()).toEqual(['attribute', 'message', 'type']);
    expect(typeof error.message).toBe('string');
    expect(error.message.length).toBeGreaterThan(0);
  }
  expect(Object.fromEntries(body.map((e) => [e.attribute, e.type]))).toEqual(expected);
}

export function expectError(res: LightMyRequestResponse, status: number): string {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as { error: string };
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error).toBe('string');
  return body.error;
}

export function expectUnauthorized(res: LightMyRequestResponse): void {
  expectError(res, 401);
  expect(res.headers['www-authenticate']).toBe('Bearer');
}

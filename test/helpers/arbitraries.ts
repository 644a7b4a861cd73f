// Shared by the hostile-input property tests: the arbitraries of malicious
// input and the one check every answer must pass (the interface's §7 shapes).
import fc from 'fast-check';
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { TestContext } from '../helpers/app.js';

/** Strings that have broken web services before: injection, encodings, NULs, direction marks, emoji, lone surrogates. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0000'.repeat(50),
  "'; DROP TABLE rooms; --",
  "' OR '1'='1",
  '" OR 1=1 --',
  '\\',
  "\\'",
  '%00',
  '%',
  '%zz',
  '../../../../etc/passwd',
  '..%2F..%2Fadmin',
  '%2e%2e%2f',
  '\u202EevilRTL\u202C',
  'مرحبا بالعالم',
  'שלום',
  '👩‍⚕️🩺💉',
  '\uD800',
  '\uDFFF\uD800',
  '\uFEFF',
  '\u200B\u200D',
  'Ṱ̺̺̕o͞ ̷i̲̬͇̪͙n̝̗͕v̟̜̘̦͟o̶̙̰̠kè͚̮̺̪̹̱̤ ̖t̝͕̳̣̻̪͞h̼͓̲̦̳̘̲e͇̣̰̦̬͎ ̢̼̻̱̘h͚͎͙̜̣̲ͅi̦̲̣̰̤v̻͍e̺̭̳̪̰-m̢iͅn̖̺̞̲̯̰d̵̼̟͙̩̼̘̳',
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  '${jndi:ldap://127.0.0.1/a}',
  '{{7*7}}',
  '\r\nX-Injected: yes',
  'null',
  'true',
  '1e309',
  '-0',
  'NaN',
  'Infinity',
  '__proto__',
  'constructor',
  '0x10',
  '1'.repeat(400),
  'x'.repeat(5000),
];

export const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 300 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 300 }) },
);

export const nastyNumber = fc.oneof(
  fc.constantFrom(0, -0, 1, -1, 0.5, 1e308, -1e308, 2 ** 31, 2 ** 31 - 1, 2 ** 53, 2 ** 53 + 2, 2 ** 63, -(2 ** 63), 1440, 1441, 20, 21),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Any JSON value, hostile leaves included, nested a little. */
export const nastyJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    nastyNumber,
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(nastyString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** A body built as text: things an object cannot express (deep nesting, prototype keys, broken JSON). */
export const rawBodies = fc.oneof(
  fc.integer({ min: 1, max: 30_000 }).map((n) => '['.repeat(n) + ']'.repeat(n)),
  fc.integer({ min: 1, max: 9_000 }).map((n) => '{"a":'.repeat(n) + '1' + '}'.repeat(n)),
  fc.integer({ min: 1, max: 30_000 }).map((n) => '['.repeat(n)),
  fc.constantFrom(
    '{"__proto__": {"admin": true}, "name": "x", "meeting_duration": 5, "scheduled_at": "2026-03-10T14:00:00Z"}',
    '{"constructor": {"prototype": {"polluted": 1}}, "name": "x", "meeting_duration": 5, "scheduled_at": "2026-03-10T14:00:00Z"}',
    '{"name": "a", "name": "b", "meeting_duration": 5, "scheduled_at": "2026-03-10T14:00:00Z"}',
    '{"name": "x\\u0000", "meeting_duration": 5, "scheduled_at": "2026-03-10T14:00:00Z"}',
    '{"name": "x", "meeting_duration": 1e400, "scheduled_at": "2026-03-10T14:00:00Z"}',
    '{"name": "x", "meeting_duration": 5, "scheduled_at": "0000-01-01T00:00:00Z"}',
    '{"name": "x", "meeting_duration": 5, "scheduled_at": "275760-09-13T00:00:00Z"}',
    '{"name": "x", "meeting_duration": 5, "scheduled_at": "2026-02-30T10:00:00Z"}',
    '{"name": "x", "meeting_duration": 5, "scheduled_at": "2026-12-31T23:59:60Z"}',
    '{"name":',
    '{',
    '}',
    '"just a string"',
    '12',
    'null',
    'true',
    '[]',
    '\u0000',
    '\uFEFF{"name":"x","meeting_duration":5,"scheduled_at":"2026-03-10T14:00:00Z"}',
    '{"name": "\\ud800", "meeting_duration": 5, "scheduled_at": "2026-03-10T14:00:00Z"}',
    'name=x&meeting_duration=5',
  ),
  fc.string({ unit: 'binary', maxLength: 500 }),
);

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  '',
  ';;;',
  'application/json, text/plain',
  'application/vnd.api+json',
];

type Response = LightMyRequestResponse;

/** No 5xx, JSON errors in the documented shape: 400 an array of {attribute,type,message}; other errors {error}. */
export function documentedShapeProblem(res: Response, method = 'GET'): string | null {
  if (res.statusCode >= 500) return `status ${res.statusCode}: ${res.body.slice(0, 300)}`;
  if (res.statusCode < 400 || method === 'HEAD') return null;
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

/** Fails the property (with the reason) when an answer breaks the contract; bounded in time, so a stall fails too. */
export async function checkedRequest(ctx: TestContext, options: Parameters<TestContext['request']>[0], limitMs = 5_000): Promise<Response> {
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

/** Counts the statuses a property saw, to prove it reached what it meant to reach. */
export function tally() {
  const counts = new Map<number, number>();
  return {
    add: (status: number) => void counts.set(status, (counts.get(status) ?? 0) + 1),
    expectSome(...statuses: number[]) {
      for (const status of statuses) expect(counts.get(status) ?? 0, `no ${status} among ${JSON.stringify([...counts])}`).toBeGreaterThan(0);
    },
  };
}

/** Runs per property; FC_RUNS overrides (a longer hunt: FC_RUNS=5000 npx vitest run test/security). */
export const RUNS = Number(process.env.FC_RUNS ?? 150);

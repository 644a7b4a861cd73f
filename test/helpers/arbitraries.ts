// fast-check arbitraries of hostile input for the property tests (REST and
// signaling): strings, numbers, JSON values, raw bodies and content types that
// have broken web services before; tally() and RUNS for the properties
// themselves. The check every answer must pass is in api.ts
// (documentedShapeProblem, checkedRequest).
import fc from 'fast-check';
import { expect } from 'vitest';

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

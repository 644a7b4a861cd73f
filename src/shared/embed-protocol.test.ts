// The two readers of the embedding protocol (docs/embedding.md): every
// documented command and event is taken, anything else is null and never an
// exception, whatever a page posts (fast-check, structured-clone-like values).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParleyCommandMessage } from '../client/embed.js';
import { nastyJson, nastyString, RUNS } from '../../test/helpers/arbitraries.js';
import { parseEmbedCommand, parseEmbedEvent } from './embed-protocol.js';

const VALID_COMMANDS: ParleyCommandMessage[] = [
  { parley: 1, command: 'toggle_microphone', detail: {} },
  { parley: 1, command: 'toggle_microphone', detail: { enabled: true } },
  { parley: 1, command: 'toggle_camera', detail: { enabled: false } },
  { parley: 1, command: 'toggle_chat', detail: {} },
  { parley: 1, command: 'leave', detail: {} },
  { parley: 1, command: 'admit', detail: {} },
  { parley: 1, command: 'admit', detail: { display_name: 'Pat' } },
  { parley: 1, command: 'deny', detail: { display_name: 'د. ليلى' } },
];

/** Values postMessage can carry that JSON cannot: class instances and prototypes other than Object's. */
const cloneable = fc.oneof(
  fc.constant(new Date(0)),
  fc.constant(new Map([['command', 'leave']])),
  fc.constant(new Set([1])),
  fc.constant(/leave/),
  fc.constant(new Uint8Array([1, 2])),
  fc.constant(new ArrayBuffer(4)),
  fc.constant(Object.create(null) as object),
  fc.constant(Object.assign(Object.create({ parley: 1, command: 'leave' }) as object, {})),
  fc.bigInt(),
);

/** A documented command with one thing wrong. */
const nearMiss = fc.tuple(fc.constantFrom(...VALID_COMMANDS), fc.nat(9), fc.oneof(nastyJson, nastyString, cloneable)).map(([valid, how, value]) => {
  const copy: Record<string, unknown> = { ...valid, detail: { ...valid.detail } };
  const detail = copy.detail as Record<string, unknown>;
  switch (how) {
    case 0: return { ...copy, parley: value === 1 ? 2 : value };
    case 1: return { ...copy, command: typeof value === 'string' && Object.hasOwn({ leave: 1, toggle_chat: 1, toggle_camera: 1, toggle_microphone: 1, admit: 1, deny: 1 }, value) ? `${value}!` : value };
    case 2: return { ...copy, extra: value };
    case 3: return { ...copy, detail: { ...detail, extra: value } };
    case 4: return { ...copy, detail: Array.isArray(value) || value === null || typeof value !== 'object' ? value : [value] };
    case 5: return { ...copy, detail: { ...detail, enabled: typeof value === 'boolean' ? String(value) : value } };
    case 6: return { ...copy, detail: { display_name: typeof value === 'string' && value.length > 0 && value.length <= 100 ? value.repeat(101) : value } };
    case 7: return { ...copy, ['__proto__']: { command: 'leave' } };
    case 8: return [copy];
    default: return JSON.stringify(copy);
  }
});

describe('parseEmbedCommand', () => {
  it.each(VALID_COMMANDS)('takes %j', (command) => {
    expect(parseEmbedCommand(structuredClone(command))).toEqual(command);
  });

  it('takes a command without detail where every argument is optional', () => {
    expect(parseEmbedCommand({ parley: 1, command: 'leave' })).toEqual({ parley: 1, command: 'leave', detail: {} });
    expect(parseEmbedCommand({ parley: 1, command: 'toggle_camera' })).toEqual({ parley: 1, command: 'toggle_camera', detail: {} });
  });

  it('refuses every near miss of a documented command', () => {
    fc.assert(
      fc.property(nearMiss, (value) => {
        expect(parseEmbedCommand(value)).toBeNull();
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it('returns null for any value at all, or a documented command (never an exception)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withNullPrototype: true }), nastyJson, cloneable), (value) => {
        const parsed = parseEmbedCommand(value);
        if (parsed !== null) expect(VALID_COMMANDS.map((c) => c.command)).toContain(parsed.command);
      }),
      { numRuns: RUNS * 4 },
    );
  });

  it('keeps nothing of the object it was given (no shared reference to mutate later)', () => {
    const detail = { enabled: true };
    const parsed = parseEmbedCommand({ parley: 1, command: 'toggle_camera', detail })!;
    detail.enabled = false;
    expect(parsed.detail).toEqual({ enabled: true });
  });
});

describe('parseEmbedEvent', () => {
  it('takes a documented event, dropping fields it does not document', () => {
    expect(parseEmbedEvent({ parley: 1, event: 'join', detail: { role: 'host', display_name: 'Dr. Ada', later: 1 } })).toEqual({
      parley: 1,
      event: 'join',
      detail: { role: 'host', display_name: 'Dr. Ada' },
    });
    expect(parseEmbedEvent({ parley: 1, event: 'ready', detail: {} })).toEqual({ parley: 1, event: 'ready', detail: {} });
    expect(parseEmbedEvent({ parley: 1, event: 'leave', detail: { reason: 'denied' } })?.detail).toEqual({ reason: 'denied' });
  });

  it.each([
    { parley: 1, event: 'join', detail: { role: 'admin', display_name: 'x' } },
    { parley: 1, event: 'join', detail: { role: 'host' } },
    { parley: 1, event: 'leave', detail: { reason: 'bored' } },
    { parley: 1, event: 'feedback', detail: { rating: 5 } },
    { parley: 1, event: 'toString', detail: {} },
    { parley: 1, event: '__proto__', detail: {} },
    { parley: 2, event: 'ready', detail: {} },
    { parley: 1, event: 'ready' },
    { parley: 1, event: 'ready', detail: [] },
    'ready',
    null,
  ])('refuses %j', (value) => {
    expect(parseEmbedEvent(value)).toBeNull();
  });

  it('never throws', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything({ withBigInt: true, withDate: true, withMap: true, withNullPrototype: true }), nastyJson, cloneable), (value) => {
        parseEmbedEvent(value);
      }),
      { numRuns: RUNS * 2 },
    );
  });
});

// The recording messages through the one parser of incoming frames
// (protocol.ts parseClientMessage): each well-formed one is taken, and every
// malformed one is a `bad-request` that keeps its requestId, so the request
// still gets its one reply.
import { describe, expect, it } from 'vitest';
import { parseClientMessage } from './protocol.js';

const parse = (value: unknown) => parseClientMessage(JSON.stringify(value));

describe('recording messages', () => {
  it('takes the host’s start and stop, and an answer to a request', () => {
    expect(parse({ type: 'recording-start', requestId: 'r1' })).toEqual({ ok: true, message: { type: 'recording-start', requestId: 'r1' } });
    expect(parse({ type: 'recording-stop', requestId: 'r2', extra: 1 })).toEqual({ ok: true, message: { type: 'recording-stop', requestId: 'r2' } });
    for (const accepted of [true, false]) {
      expect(parse({ type: 'recording-consent', requestId: 'r3', askId: 'Ab_-9', accepted })).toEqual({
        ok: true,
        message: { type: 'recording-consent', requestId: 'r3', askId: 'Ab_-9', accepted },
      });
    }
  });

  it.each([
    [{ type: 'recording-start' }, undefined],
    [{ type: 'recording-stop', requestId: '' }, undefined],
    [{ type: 'recording-consent', askId: 'a', accepted: true }, undefined],
    [{ type: 'recording-consent', requestId: 'r', accepted: true }, 'r'],
    [{ type: 'recording-consent', requestId: 'r', askId: 'a b', accepted: true }, 'r'],
    [{ type: 'recording-consent', requestId: 'r', askId: 'x'.repeat(65), accepted: true }, 'r'],
    [{ type: 'recording-consent', requestId: 'r', askId: 'a', accepted: 'yes' }, 'r'],
    [{ type: 'recording-consent', requestId: 'r', askId: 'a' }, 'r'],
    [{ type: 'recording-consent', requestId: 'r', askId: { $ne: 1 }, accepted: true }, 'r'],
  ])('refuses %j as bad-request', (value, requestId) => {
    const parsed = parse(value);
    expect(parsed).toMatchObject({ ok: false, code: 'bad-request' });
    expect(parsed.ok ? undefined : parsed.requestId).toBe(requestId);
  });

  it('does not take a recording message the protocol does not have', () => {
    expect(parse({ type: 'recording-pause', requestId: 'r' })).toMatchObject({ ok: false, code: 'unknown-type', requestId: 'r' });
  });
});

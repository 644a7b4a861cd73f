// One request to record (consent-round.ts): over when everyone asked answered
// or left, or at the time limit; who did not answer by then did not agree.
import { describe, expect, it } from 'vitest';
import { createConsentRound } from './consent-round.js';

const at = new Date('2026-03-10T12:00:00Z');
const asked = [
  { peerId: 'a', name: 'Ann', role: 'guest' as const },
  { peerId: 'b', name: 'Bo', role: 'guest' as const },
];

describe('a consent round', () => {
  it('is over once everyone answered: accepted by all, or with the names of who declined', () => {
    const yes = createConsentRound(asked);
    expect(yes.answer('a', true, at)).toEqual({ done: false });
    expect(yes.answer('b', true, at)).toMatchObject({ done: true, declined: [], accepted: [{ name: 'Ann' }, { name: 'Bo' }] });
    const no = createConsentRound(asked);
    no.answer('a', false, at);
    expect(no.answer('b', true, at)).toMatchObject({ done: true, declined: ['Ann'], accepted: [{ name: 'Bo' }] });
  });

  it('ignores answers from someone not asked, and a second answer', () => {
    const round = createConsentRound(asked);
    round.answer('a', true, at);
    expect(round.answer('a', false, at)).toEqual({ done: false });
    expect(round.answer('stranger', false, at)).toEqual({ done: false });
    expect(round.answer('b', true, at)).toMatchObject({ done: true, declined: [] });
  });

  it('no longer counts someone who left, whatever they answered', () => {
    const round = createConsentRound(asked);
    round.answer('a', false, at);
    expect(round.left('a')).toEqual({ done: false });
    expect(round.left('b')).toEqual({ done: true, accepted: [], declined: [] });
  });

  it('counts who has not answered at the time limit as declining', () => {
    const round = createConsentRound(asked);
    round.answer('b', true, at);
    expect(round.timedOut()).toMatchObject({ done: true, declined: ['Ann'], accepted: [{ name: 'Bo' }] });
  });
});

// Going up to the SFU after the peer-to-peer connections (docs/design.md, "Group calls through an SFU", Mesh first).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Handover } from './handover.js';
import { createPathMoves, MESH_FIRST_MS } from './path-moves.js';
import type { MediaPath } from './path-choice.js';
import type { SfuCall } from './sfu-call.js';

afterEach(() => vi.useRealTimers());

/** A page with `others` in its call, its SFU path warm or not; what its SFU path did, in order. */
function page(others: string[], warm = false) {
  const did: string[] = [];
  const states = new Map<string, RTCPeerConnectionState>();
  /** The peers whose connection decoded a video frame. */
  const pictured = new Set<string>();
  const people = { others: [...others], path: 'sfu' as MediaPath };
  let active = warm;
  const call = {
    get active() {
      return active;
    },
    start: async (send: boolean) => {
      active = true;
      did.push(`start ${send}`);
    },
    send: (on: boolean) => did.push(`send ${on}`),
    stop: () => {
      active = false;
      did.push('stop');
    },
  } as unknown as SfuCall;
  const handover = { begin: () => {}, end: () => [] } as unknown as Handover;
  const moves = createPathMoves({
    call,
    handover,
    mesh: {
      add: (() => {}) as never,
      present: () => {},
      byPeer: () =>
        [...states].map(([id, connectionState]): [string, RTCPeerConnection] => {
          const stats = new Map(pictured.has(id) ? [['video', { type: 'inbound-rtp', kind: 'video', framesDecoded: 1 }]] : []);
          return [id, { connectionState, getStats: async () => stats } as unknown as RTCPeerConnection];
        }),
    },
    others: () => people.others,
    path: () => people.path,
    warmWanted: () => false,
  });
  return { moves, did, states, pictured, people };
}

describe('going up to the SFU', () => {
  it('waits, on a page already there, until the newcomer’s peer-to-peer connection (not made yet) carries pictures', async () => {
    vi.useFakeTimers();
    const { moves, did, states, pictured } = page(['old', 'new']);
    states.set('old', 'connected');
    pictured.add('old');
    moves.up(null);
    await vi.advanceTimersByTimeAsync(200);
    expect(did).toEqual([]);
    states.set('new', 'connecting');
    await vi.advanceTimersByTimeAsync(200);
    expect(did).toEqual([]);
    // Connected is not enough: the first frames come some 100 ms later.
    states.set('new', 'connected');
    await vi.advanceTimersByTimeAsync(200);
    expect(did).toEqual([]);
    pictured.add('new');
    await vi.advanceTimersByTimeAsync(100);
    expect(did).toEqual(['start true']);
    await vi.advanceTimersByTimeAsync(2 * MESH_FIRST_MS);
    expect(did).toEqual(['start true']);
  });

  it('switches a warm SFU path on, and the newcomer starts its own, once the peer-to-peer connections carry pictures or failed', async () => {
    vi.useFakeTimers();
    const warm = page(['a', 'b'], true);
    for (const id of ['a', 'b']) {
      warm.states.set(id, 'connected');
      warm.pictured.add(id);
    }
    warm.moves.up(null);
    await vi.advanceTimersByTimeAsync(100);
    expect(warm.did).toEqual(['send true']);

    // The newcomer goes up in its joined, before its connections are made and its list of the others has them.
    const newcomer = page([]);
    newcomer.moves.up(['a', 'b']);
    await vi.advanceTimersByTimeAsync(100);
    expect(newcomer.did).toEqual([]);
    newcomer.states.set('a', 'connected');
    newcomer.pictured.add('a');
    newcomer.states.set('b', 'connecting');
    newcomer.people.others = ['a', 'b'];
    await vi.advanceTimersByTimeAsync(200);
    expect(newcomer.did).toEqual([]);
    newcomer.states.set('b', 'failed');
    await vi.advanceTimersByTimeAsync(100);
    expect(newcomer.did).toEqual(['start true']);
  });

  it('does not wait longer than MESH_FIRST_MS for pictures that do not come, nor for a peer who left', async () => {
    vi.useFakeTimers();
    const slow = page(['a']);
    slow.states.set('a', 'connected');
    slow.moves.up(null);
    await vi.advanceTimersByTimeAsync(MESH_FIRST_MS - 100);
    expect(slow.did).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    expect(slow.did).toEqual(['start true']);

    const left = page(['a', 'b']);
    left.states.set('a', 'connected');
    left.pictured.add('a');
    left.moves.up(null);
    await vi.advanceTimersByTimeAsync(200);
    expect(left.did).toEqual([]);
    left.people.others = ['a'];
    await vi.advanceTimersByTimeAsync(100);
    expect(left.did).toEqual(['start true']);
  });

  it('starts at once for a page that goes straight to the SFU from its join (the fourth person), with nobody to call peer to peer', async () => {
    vi.useFakeTimers();
    const { moves, did } = page(['a', 'b', 'c']);
    moves.up(null, true);
    await vi.advanceTimersByTimeAsync(0);
    expect(did).toEqual(['start true']);
  });

  it('starts nothing when the path went down again while it waited', async () => {
    vi.useFakeTimers();
    const { moves, did, people } = page(['a', 'b']);
    moves.up(null);
    await vi.advanceTimersByTimeAsync(200);
    people.path = 'mesh';
    moves.down();
    await vi.advanceTimersByTimeAsync(2 * MESH_FIRST_MS);
    expect(did).toEqual(['stop']);
  });
});

// The move from the mesh to the SFU, peer by peer (docs/design.md, "Group calls through an SFU").
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHandover } from './handover.js';

afterEach(() => vi.useRealTimers());

/** A handover whose peers' media comes through the SFU when the test says so; what it did, in order. */
function world(limitMs = 10_000) {
  const arrived = new Set<string>();
  const did: string[] = [];
  const handover = createHandover(
    {
      arriving: async (peerId) => arrived.has(peerId),
      show: (peerId) => did.push(`show ${peerId}`),
      tell: (peerId) => did.push(`tell ${peerId}`),
      close: (peerId) => did.push(`close ${peerId}`),
    },
    limitMs,
    100,
  );
  return { handover, arrived, did };
}

describe('the handover to the SFU', () => {
  it('keeps each peer on its peer-to-peer connection until its media comes through the SFU, and closes it once both sides moved', async () => {
    vi.useFakeTimers();
    const { handover, arrived, did } = world();
    handover.begin(['b', 'c']);
    await vi.advanceTimersByTimeAsync(500);
    expect(did).toEqual([]);
    expect(handover.onMesh('b') && handover.onMesh('c')).toBe(true);
    arrived.add('b');
    await vi.advanceTimersByTimeAsync(100);
    // b's tile takes the SFU's stream and b hears so; the connection stays: b may still show ours.
    expect(did).toEqual(['show b', 'tell b']);
    expect(handover.onMesh('b')).toBe(false);
    expect(handover.open('b')).toBe(true);
    handover.told('b');
    expect(did).toEqual(['show b', 'tell b', 'close b']);
    expect(handover.open('b')).toBe(false);
    // c moved first: its connection closes as soon as its media comes here too.
    handover.told('c');
    expect(handover.open('c')).toBe(true);
    arrived.add('c');
    await vi.advanceTimersByTimeAsync(100);
    expect(did.slice(3)).toEqual(['show c', 'tell c', 'close c']);
    // Nothing left to check: no timer runs on.
    expect(vi.getTimerCount()).toBe(0);
  });

  it('moves a peer whose media never came through the SFU after the limit', async () => {
    vi.useFakeTimers();
    const { handover, did } = world(10_000);
    handover.begin(['b']);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(handover.onMesh('b')).toBe(true);
    await vi.advanceTimersByTimeAsync(1);
    expect(did).toEqual(['show b', 'tell b', 'close b']);
    expect(handover.open('b')).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ignores news of a peer not moving, and going down closes only the connections whose tiles show the SFU path', async () => {
    vi.useFakeTimers();
    const { handover, arrived, did } = world();
    handover.told('x');
    expect(handover.open('x')).toBe(false);
    handover.begin(['b', 'c']);
    arrived.add('b');
    await vi.advanceTimersByTimeAsync(100);
    // b's tile showed the SFU path, which goes: its connection goes too, and b is named, as b may still show this
    // page through it (it never said it moved): the mesh calls b again. c's keeps flowing.
    expect(handover.end()).toEqual(['b']);
    expect(did).toEqual(['show b', 'tell b', 'close b']);
    expect(handover.open('c')).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });
});

// What the page says about its connections, with recorders for the screen and
// plain objects for the peer connections (only their connectionState is read).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { OWN_LINK_QUEUE_MS, createConnectionHealth } from './connection-health.js';
import type { Quality } from './quality.js';
import { t } from '../i18n.js';

function fixture(states: Record<string, RTCPeerConnectionState>, signalingHealthy = true) {
  const seen = { banner: false, said: [] as string[], lost: new Map<string, boolean>(), probes: 0, queueMs: null as number | null };
  const health = createConnectionHealth({
    setBanner: (on) => void (seen.banner = on),
    say: (message) => void seen.said.push(message),
    saying: () => seen.said.at(-1) ?? '',
    peers: { connectionLost: (id, lost) => void seen.lost.set(id, lost), quality: () => {} },
    connections: () => Object.entries(states).map(([id, connectionState]) => [id, { connectionState } as RTCPeerConnection]),
    signalingHealthy: () => signalingHealthy,
    ownQueueMs: () => seen.queueMs,
    probe: () => void seen.probes++,
  });
  return { health, seen, states };
}

const quality = (sendKbps: number | null): Quality => ({ level: 'good', rttMs: 40, loss: 0, sendKbps, relayed: null });

afterEach(() => vi.useRealTimers());

describe('connection health', () => {
  it('shows the banner from the drop until rejoined with media flowing', () => {
    const { health, seen, states } = fixture({ a: 'connected' });
    health.lost();
    expect(seen.banner).toBe(true);
    states.a = 'disconnected';
    health.rejoined();
    expect(seen.banner).toBe(true); // rejoined, but no media yet
    health.peerFlowing('a');
    expect(seen.banner).toBe(false);
  });

  it('takes the banner down at once when rejoined with a connection up, or with nobody to connect to', () => {
    const up = fixture({ a: 'connected' });
    up.health.lost();
    up.health.rejoined();
    expect(up.seen.banner).toBe(false);
    const alone = fixture({});
    alone.health.lost();
    alone.health.rejoined();
    expect(alone.seen.banner).toBe(false);
  });

  it('does not take the banner down for media that flows before the page has rejoined', () => {
    const { health, seen } = fixture({ a: 'connected' });
    health.lost();
    health.peerFlowing('a');
    expect(seen.banner).toBe(true);
  });

  it('gives up waiting for media 10 s after rejoining: the tiles say what is missing', () => {
    vi.useFakeTimers();
    const { health, seen } = fixture({ a: 'failed' });
    health.lost();
    health.rejoined();
    vi.advanceTimersByTime(9_999);
    expect(seen.banner).toBe(true);
    vi.advanceTimersByTime(1);
    expect(seen.banner).toBe(false);
  });

  it('shows the banner while a probe is in doubt, and not after it is answered', () => {
    const { health, seen } = fixture({ a: 'connected' });
    health.doubt(true);
    expect(seen.banner).toBe(true);
    health.doubt(false);
    expect(seen.banner).toBe(false);
  });

  it('blames the peer on its tile only while our own connection is fine, and checks ours either way', () => {
    const fine = fixture({ a: 'disconnected' });
    fine.health.peerLost('a');
    expect(fine.seen.lost.get('a')).toBe(true);
    expect(fine.seen.probes).toBe(1);

    const ours = fixture({ a: 'disconnected' });
    ours.health.doubt(true);
    ours.health.peerLost('a');
    expect(ours.seen.lost.has('a')).toBe(false);
    expect(ours.seen.probes).toBe(1);

    const unhealthy = fixture({ a: 'disconnected' }, false);
    unhealthy.health.peerLost('a');
    expect(unhealthy.seen.lost.has('a')).toBe(false);
  });

  it('says the link is weak once every peer\u2019s send estimate is under 150 kbit/s, and takes it back above 250', () => {
    const { health, seen } = fixture({ a: 'connected', b: 'connected' });
    health.quality('a', quality(100));
    expect(seen.said).toEqual([]); // b not known yet
    health.quality('b', quality(140));
    expect(seen.said).toEqual([t('connection.weakLink')]);
    health.quality('b', quality(120));
    expect(seen.said).toEqual([t('connection.weakLink')]); // said once
    health.quality('a', quality(200)); // hovering just above 150: still weak, no flicker
    expect(seen.said).toEqual([t('connection.weakLink')]);
    health.quality('a', quality(600));
    expect(seen.said).toEqual([t('connection.weakLink'), '']);
    health.quality('a', quality(null)); // a browser without an estimate is never called weak
    expect(seen.said).toEqual([t('connection.weakLink'), '']);
  });

  it('blames nobody while there is one peer: the thin link may be at either end', () => {
    const { health, seen, states } = fixture({ a: 'connected' });
    health.quality('a', quality(100));
    expect(seen.said).toEqual([t('connection.weakBetween')]);
    states.b = 'connected'; // a second peer, on the same thin link: now it is ours
    health.quality('b', quality(90));
    expect(seen.said).toEqual([t('connection.weakBetween'), t('connection.weakLink')]);
    health.quality('b', quality(600)); // one peer gets through: not our link after all
    expect(seen.said.at(-1)).toBe('');
  });

  it('says the link is ours with one peer once our pings to the server queue, and keeps saying so until it recovers', () => {
    const { health, seen } = fixture({ a: 'connected' });
    seen.queueMs = 20; // jitter, no queue
    health.quality('a', quality(100));
    expect(seen.said).toEqual([t('connection.weakBetween')]);
    seen.queueMs = OWN_LINK_QUEUE_MS; // our media fills our link: the pings wait behind it
    health.quality('a', quality(100));
    expect(seen.said).toEqual([t('connection.weakBetween'), t('connection.weakLink')]);
    seen.queueMs = 30; // the queue drains as the video gives way: still our link
    health.quality('a', quality(100));
    expect(seen.said.at(-1)).toBe(t('connection.weakLink'));
    health.quality('a', quality(600)); // recovered
    health.quality('a', quality(100)); // weak again, no queue: nobody blamed
    expect(seen.said.slice(-2)).toEqual(['', t('connection.weakBetween')]);
  });

  it('brings the weak-link notice back after a passing message while the link stays weak, and clears only the notice', () => {
    const { health, seen } = fixture({ a: 'connected' });
    health.quality('a', quality(100));
    seen.said.push(t('connection.reconnected')); // another part of the page says something
    health.quality('a', quality(100));
    expect(seen.said).toEqual([t('connection.weakBetween'), t('connection.reconnected'), t('connection.weakBetween')]);
    seen.said.push(t('invite.copied'));
    health.quality('a', quality(600)); // the link is back: the other message stays
    expect(seen.said.at(-1)).toBe(t('invite.copied'));
    expect(seen.said).not.toContain('');
  });
});

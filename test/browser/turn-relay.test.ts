// A call forced through a real TURN server (Debian's coturn, started here):
// ICE_TRANSPORT_POLICY=relay, short-lived credentials from TURN_SECRET (the
// coturn REST scheme). Host and guest still decode each other's video, and
// the selected candidate pair is a relayed one on both sides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startCoturn } from '../../scripts/coturn.mjs';
import { expectMediaFlowing, join, selectedPairs, startWorld, type BrowserWorld } from '../helpers/browser.js';

const SECRET = 'turn-test-secret-0123456789';
let turn: { url: string; stop(): Promise<void> };
let world: BrowserWorld;

beforeAll(async () => {
  turn = await startCoturn({ secret: SECRET });
  world = await startWorld({ TURN_SECRET: SECRET, TURN_URLS: turn.url, ICE_TRANSPORT_POLICY: 'relay' });
});
afterAll(async () => {
  await world?.close();
  await turn?.stop();
});

describe('a relay-only call through coturn', () => {
  it('connects host and guest through TURN with per-participant credentials', async () => {
    const room = await world.createRoom();
    const host = await world.participant();
    const guest = await world.participant();
    // The join reply carries a TURN server with a time-limited username, never a static password.
    const joined = new Promise<any>((resolve) =>
      host.on('websocket', (ws) =>
        ws.on('framereceived', (frame) => {
          const message = JSON.parse(String(frame.payload));
          if (message.type === 'joined') resolve(message);
        }),
      ),
    );
    await join(host, room.host_join_url, 'Dr. Relay');
    await join(guest, room.guest_join_url, 'Patient');
    const reply = await joined;
    expect(reply.iceTransportPolicy).toBe('relay');
    const turnEntry = reply.iceServers.find((s: any) => [s.urls].flat().some((u: string) => u.startsWith('turn:')));
    const [expiry, peer] = String(turnEntry.username).split(':');
    expect(Number(expiry)).toBeGreaterThan(Date.now() / 1000);
    expect(peer).toBe(reply.self.id);
    expect(turnEntry.credential).not.toBe(SECRET);

    await Promise.all([expectMediaFlowing(host, 20_000), expectMediaFlowing(guest, 20_000)]);
    for (const page of [host, guest]) {
      const pairs = await selectedPairs(page);
      expect(pairs.length).toBeGreaterThan(0);
      for (const pair of pairs) expect(pair.local).toBe('relay');
    }
  });
});

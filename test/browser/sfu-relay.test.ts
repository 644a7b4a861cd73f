// A relay-only call through Janus (docs/design.md, "Group calls through an
// SFU"): ICE_TRANSPORT_POLICY=relay, so every page reaches Janus only through
// coturn (started here, short-lived credentials from TURN_SECRET); three
// people, everyone decodes everyone, and every connected connection's
// selected pair starts from a relay candidate.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startCoturn } from '../../scripts/coturn.mjs';
import { join, selectedPairs, startWorld, type BrowserWorld } from '../helpers/browser.js';
import { ownAddress, startTestJanus } from '../helpers/janus.js';
import { everyoneSees } from '../helpers/sfu.js';
import type { LocalJanus } from '../../src/local-janus.js';

const SECRET = 'sfu-relay-test-secret';
let turn: { url: string; stop(): Promise<void> };
let janus: LocalJanus;
let world: BrowserWorld;

beforeAll(async () => {
  // coturn on the address Janus gathers on: Janus takes no candidate on loopback, a relay's included.
  [turn, janus] = await Promise.all([startCoturn({ secret: SECRET, address: ownAddress() }), startTestJanus()]);
  world = await startWorld({ TURN_SECRET: SECRET, TURN_URLS: turn.url, ICE_TRANSPORT_POLICY: 'relay', SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret });
}, 60_000);

afterAll(async () => {
  await world?.close();
  await janus?.stop();
  await turn?.stop();
});

describe('a relay-only call through Janus', () => {
  it('reaches Janus through coturn only, and everyone decodes everyone', async () => {
    const room = await world.createRoom();
    const pages = [await world.participant(), await world.participant(), await world.participant()];
    await join(pages[0]!, room.host_join_url, 'Dr. Ada');
    await join(pages[1]!, room.guest_join_url, 'Pat');
    await join(pages[2]!, room.guest_join_url, 'Relative');
    await everyoneSees(pages, 2, 45_000);
    for (const page of pages) {
      const pairs = await selectedPairs(page);
      expect(pairs.length).toBeGreaterThan(0);
      expect(pairs.map((pair) => pair.local)).toEqual(pairs.map(() => 'relay'));
    }
  }, 90_000);
});

// Three people in a call reload their pages at the same moment and press
// Join again together (issue 45: two of them still had no video of each other
// 8 s later). Every page makes new connections, and each one's offers cross
// the others' offers and their old pages' last answers; everyone must see and
// hear everyone again, by themselves, within RECOVERED_WITHIN_MS. One node
// here; test/cluster/reload-together.test.ts does the same across two.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join, pressJoin, startWorld, type BrowserWorld } from '../helpers/browser.js';
import { flowingFrom, reloadTogether } from '../helpers/reload-together.js';

/** A working build is back in a few seconds on a loaded machine; the race left pages without video for good. */
const RECOVERED_WITHIN_MS = 20_000;
const ROUNDS = 4;

let world: BrowserWorld;
beforeAll(async () => {
  // SFU=off: this is about the mesh, whose new pages' offers cross each other's (and flowingFrom counts a
  // connection per peer); through Janus a call of three has no peer-to-peer offers to cross.
  world = await startWorld({ RECONNECT_GRACE_SECONDS: '20', SFU: 'off' });
});
afterAll(() => world?.close());

describe('three people reloading together', () => {
  it(`see and hear each other again within ${RECOVERED_WITHIN_MS / 1000} s, round after round`, { timeout: 300_000 }, async () => {
    const room = await world.createRoom();
    const pages: Page[] = [await world.participant(), await world.participant(), await world.participant()];
    await join(pages[0]!, room.host_join_url, 'Host');
    await join(pages[1]!, room.guest_join_url, 'Guest one');
    await join(pages[2]!, room.guest_join_url, 'Guest two');
    await Promise.all(pages.map((page) => flowingFrom(page, 2, 45_000)));

    const took: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      took.push(await reloadTogether(pages, pressJoin, RECOVERED_WITHIN_MS));
    }
    console.log(`[reload-together] one node, ${ROUNDS} rounds: everyone flowing from everyone after ${took.map((ms) => `${ms} ms`).join(', ')}`);
    expect(took).toHaveLength(ROUNDS);
  });
});

// The check on the join screen (issue 13): a speaker test and the network's
// verdict. On loopback the verdict is "ready"; a guest in its own network
// namespace whose UDP is blocked, with STUN and TURN (coturn, over UDP)
// offered, is told its network blocks video calls, and the same guest with
// UDP open is told it is ready.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { startCoturn } from '../../scripts/coturn.mjs';
import { en } from '../../src/i18n/en.js';
import { startWorld, type BrowserWorld } from '../helpers/browser.js';
import { startNetworkWorld, type NetworkWorld } from '../helpers/netns-world.js';
import { createGuestNetwork, skipReasonOrThrow, type GuestNetwork } from '../helpers/netns.js';

const verdictOf = async (page: Page) => {
  const verdict = page.getByTestId('network-verdict');
  await expect.poll(() => verdict.getAttribute('data-verdict'), { timeout: 15_000 }).not.toBe('checking');
  return { verdict: await verdict.getAttribute('data-verdict'), text: await verdict.textContent() };
};

describe('on loopback', () => {
  let world: BrowserWorld;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterEach(() => world.closeContexts());
  afterAll(() => world?.close());

  it('says the connection is ready, plays a test tune, and Join still works', async () => {
    const room = await world.createRoom();
    const page = await world.participant();
    await page.addInitScript(() => {
      const start = OscillatorNode.prototype.start;
      (window as unknown as { __tones: number }).__tones = 0;
      OscillatorNode.prototype.start = function (...args: Parameters<typeof start>) {
        (window as unknown as { __tones: number }).__tones++;
        return start.apply(this, args);
      };
    });
    await page.goto(room.guest_join_url);
    expect(await verdictOf(page)).toEqual({ verdict: 'ready', text: en['check.ready'] });
    await page.getByTestId('speaker-test-button').click();
    await expect.poll(() => page.evaluate(() => (window as unknown as { __tones: number }).__tones)).toBe(4);
    await page.getByTestId('name-input').fill('Pat');
    await page.getByTestId('join-button').click();
    await page.getByTestId('leave-button').waitFor();
  });
});

const skip = skipReasonOrThrow();

describe.skipIf(skip)('a guest whose network blocks UDP (its own namespace, STUN and TURN offered)', () => {
  const SECRET = 'turn-test-secret-precall-0123';
  let network: GuestNetwork;
  let world: NetworkWorld;
  let turn: { url: string; stop(): Promise<void> } | undefined;
  beforeAll(async () => {
    network = createGuestNetwork();
    turn = await startCoturn({ secret: SECRET, address: network.hostAddress });
    world = await startNetworkWorld(network, { TURN_SECRET: SECRET, TURN_URLS: turn!.url });
  });
  afterEach(() => world.closeContexts());
  afterAll(async () => {
    try {
      await world?.close();
      await turn?.stop();
    } finally {
      network?.destroy();
    }
  });

  it('is told its network blocks video calls; with UDP open again, that it is ready', { timeout: 60_000 }, async () => {
    const room = await world.createRoom();
    network.loss(100);
    const blocked = await world.guestPage();
    await blocked.goto(room.guest_join_url);
    expect(await verdictOf(blocked)).toEqual({ verdict: 'blocked', text: en['check.blocked'] });

    network.loss(0);
    const open = await world.guestPage();
    await open.goto(room.guest_join_url);
    expect(await verdictOf(open)).toEqual({ verdict: 'ready', text: en['check.ready'] });
  });
});

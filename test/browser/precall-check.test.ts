// The check on the join screen (issue 13): a speaker test and the network's
// verdict. On loopback the verdict is "ready"; a guest in its own network
// namespace whose UDP is blocked, with STUN and TURN (coturn, over UDP)
// offered, is told its network blocks video calls, and the same guest with
// UDP open is told it is ready.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { en } from '../../src/shared/i18n/en.js';
import { countTones, startWorld, type BrowserWorld } from '../helpers/browser.js';
import { startTurnWorld, type TurnWorld } from '../helpers/netns-world.js';
import { createGuestNetwork, skipReasonOrThrow } from '../helpers/netns.js';

/** Starting the world (server, relay, browsers) takes seconds on a quiet machine; on a loaded one far more than the config's minute. */
const WORLD_START_MS = 180_000;

const verdictOf = async (page: Page) => {
  const verdict = page.getByTestId('network-verdict');
  await expect.poll(() => verdict.getAttribute('data-verdict'), { timeout: 15_000 }).not.toBe('checking');
  return { verdict: await verdict.getAttribute('data-verdict'), text: await verdict.textContent() };
};

describe('on loopback', () => {
  let world: BrowserWorld;
  beforeAll(async () => {
    world = await startWorld();
  }, WORLD_START_MS);
  afterEach(() => world.closeContexts());
  afterAll(() => world?.close());

  it('says the connection is ready, plays a test tune, and Join still works', async () => {
    const room = await world.createRoom();
    const page = await world.participant();
    const tones = await countTones(page);
    await page.goto(room.guest_join_url);
    expect(await verdictOf(page)).toEqual({ verdict: 'ready', text: en['check.ready'] });
    await page.getByTestId('speaker-test-button').click();
    await expect.poll(tones, { timeout: 15_000 }).toBe(4);
    await page.getByTestId('name-input').fill('Pat');
    await page.getByTestId('join-button').click();
    await page.getByTestId('leave-button').waitFor();
  });
});

const skip = skipReasonOrThrow();

describe.skipIf(skip)('a guest whose network blocks UDP (its own namespace, STUN and TURN offered)', () => {
  let turnWorld: TurnWorld;
  beforeAll(async () => {
    turnWorld = await startTurnWorld(createGuestNetwork);
  }, WORLD_START_MS);
  afterEach(() => turnWorld.world.closeContexts());
  afterAll(() => turnWorld?.close());

  it('is told its network blocks video calls; with UDP open again, that it is ready', { timeout: 60_000 }, async () => {
    const { world, network } = turnWorld;
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

// A phone that moves from Wi-Fi to cellular mid-call: the guest's address
// changes under its browser (test/helpers/netns.ts). Before docs/call.md's
// "Recovering" the call froze for good and the API dropped the guest. Now the
// page notices, says so, comes back as the same participant and media flows
// both ways again. The timing targets (3 s median, 5 s worst) are measured by
// bench/network-recovery.bench.ts; here a bound no frozen call can meet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callConnectionStates, expectMediaFlowing, expiryOf, selectedPairs, turnUsernames } from '../helpers/browser.js';
import { measureRecovery, startNetworkWorld, startTurnWorld, waitForStall, type NetworkWorld, type TurnWorld } from '../helpers/netns-world.js';
import { cleanupStale, createGuestNetwork, skipReasonOrThrow, type GuestNetwork } from '../helpers/netns.js';
import { sleep } from '../helpers/wait.js';

/** Starting the world (server, relay, browsers) takes seconds on a quiet machine; on a loaded one far more than the config's minute. */
const WORLD_START_MS = 180_000;

const skip = skipReasonOrThrow();

let network: GuestNetwork;
let world: NetworkWorld;

/**
 * The guest's address changes `times` times; each time the guest's page shows
 * the banner, the guest stays in `current_participants`, media comes back
 * both ways within a bound no frozen call meets, and the banner goes.
 */
async function changeAddressAndRecover(world: NetworkWorld, network: GuestNetwork, { room, host, guest }: Awaited<ReturnType<NetworkWorld['call']>>, times: number) {
  const participants = async () => ((await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants as string[]).sort();
  const before = await participants();
  expect(before).toHaveLength(2);
  for (let change = 1; change <= times; change++) {
    const changedAt = Date.now();
    network.changeAddress();
    const banner = guest.getByTestId('reconnecting').waitFor({ state: 'visible', timeout: 20_000 }).then(() => Date.now() - changedAt);
    await waitForStall(guest);
    // While it recovers, the guest is still in the call for the integrator.
    expect(await participants()).toEqual(before);
    const [guestBack, hostBack] = await Promise.all([measureRecovery(guest, changedAt, 60_000), measureRecovery(host, changedAt, 60_000)]);
    const bannerAfter = await banner;
    console.log(`[network] address change ${change}: banner after ${bannerAfter} ms; media back at the guest after ${guestBack} ms, at the host after ${hostBack} ms`);
    // The bound is the behaviour: a slow detection (TCP timeouts: minutes) would miss it. A working
    // build recovers in a few seconds (printed above); 30 s is far above that on a loaded machine.
    expect(Math.max(guestBack, hostBack)).toBeLessThan(30_000);
    await guest.getByTestId('reconnecting').waitFor({ state: 'hidden', timeout: 30_000 });
    expect(await participants()).toEqual(before);
    await Promise.all([expectMediaFlowing(guest), expectMediaFlowing(host)]);
    await sleep(1000);
  }
}

describe.skipIf(skip)('the guest\u2019s address changes mid-call', () => {
  // Inside the describe: nothing is made when the file skips.
  beforeAll(async () => {
    cleanupStale();
    network = createGuestNetwork();
    world = await startNetworkWorld(network);
  }, WORLD_START_MS);
  afterAll(async () => {
    try {
      await world?.close();
    } finally {
      network?.destroy();
    }
  });

  it('recovers by itself, twice in a row: told on both sides, same participant, media back both ways', { timeout: 240_000 }, async () => {
    const call = await world.call({ host: 'Dr Lee', guest: 'Patient' });
    await changeAddressAndRecover(world, network, call, 2);
    // The guest is still the same participant, on its first peer connection (ICE restarted, not rebuilt).
    expect(await callConnectionStates(call.guest)).toHaveLength(1);
  });

  it('tells the host on the guest\u2019s tile while the guest is gone, and stops saying it when the guest is back', { timeout: 180_000 }, async () => {
    const { host, guest } = await world.call({ host: 'Dr Lee', guest: 'Patient' });
    // 'good' first is this test's starting point. A new connection's first samples can be 'fair'
    // (its send estimate starts under 400 kbit/s and ramps up; a loaded machine adds round-trip
    // spikes): in one CI run (2026-11-26) the host still saw 'fair' after 10 s.
    await expect.poll(() => host.getByTestId('connection-quality').getAttribute('data-level'), { timeout: 25_000 }).toBe('good');
    expect(await host.getByTestId('connection-quality').getAttribute('aria-label')).toMatch(/^Connection to Patient: good, round trip \d+ ms/);

    // Down long enough for the host's page to see the guest's media gone.
    network.linkDown();
    const notice = host.getByTestId('peer-notice');
    await notice.waitFor({ state: 'visible', timeout: 20_000 });
    expect(await notice.textContent()).toContain('Patient');
    expect(await host.getByTestId('connection-quality').getAttribute('data-level')).toBe('lost');
    // The host's own connection is fine: no banner there.
    expect(await host.getByTestId('reconnecting').isVisible()).toBe(false);
    await guest.getByTestId('reconnecting').waitFor({ state: 'visible', timeout: 20_000 });
    await sleep(3000); // the outage's length is the scenario, not a wait for something
    network.linkUp();
    await notice.waitFor({ state: 'hidden', timeout: 30_000 });
    await guest.getByTestId('reconnecting').waitFor({ state: 'hidden', timeout: 30_000 });
    await Promise.all([expectMediaFlowing(guest), expectMediaFlowing(host)]);
  });
});

describe.skipIf(skip)('the guest\u2019s address changes in a relay-only call (TURN) older than its credentials', () => {
  let turnWorld: TurnWorld;
  beforeAll(async () => {
    // Credentials that live ten seconds, renewed during the call (docs/signaling.md, "TURN").
    turnWorld = await startTurnWorld(createGuestNetwork, { ICE_TRANSPORT_POLICY: 'relay', TURN_TTL_SECONDS: '10' });
    ({ world, network } = turnWorld);
  }, WORLD_START_MS);
  afterAll(() => turnWorld?.close());

  it('recovers through new allocations, made with credentials renewed during the call, still relayed on both sides', { timeout: 180_000 }, async () => {
    const call = await world.call({ host: 'Dr Lee', guest: 'Patient' });
    const relayedOnly = async () => {
      for (const page of [call.host, call.guest]) {
        const pairs = await selectedPairs(page);
        expect(pairs.length).toBeGreaterThan(0);
        for (const pair of pairs) expect(pair.local).toBe('relay');
      }
    };
    await relayedOnly();
    // Every credential the two connections were made with expires; their relays stay.
    const madeWith = [...(await turnUsernames(call.host)), ...(await turnUsernames(call.guest))];
    await sleep(Math.max(...madeWith.map(expiryOf)) + 1000 - Date.now());
    expect(await callConnectionStates(call.host)).toEqual(['connected']);
    const hostRelayBefore = (await selectedPairs(call.host)).map((pair) => pair.localAddress);
    // The guest restarts ICE from its new address; the host answers it, and both gather new relays,
    // which only credentials renewed during the call can allocate.
    await changeAddressAndRecover(world, network, call, 1);
    await relayedOnly();
    for (const username of [...(await turnUsernames(call.host)), ...(await turnUsernames(call.guest))]) expect(madeWith).not.toContain(username);
    // The host's media goes through a relay allocated after the change (with expired credentials it would have kept its old one).
    for (const pair of await selectedPairs(call.host)) expect(hostRelayBefore).not.toContain(pair.localAddress);
  });
});

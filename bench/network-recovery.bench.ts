// How a call holds up on a real, impaired network link (docs/call.md,
// "Recovering"): the host's Chromium beside the server, the guest's inside a
// network namespace of its own (test/helpers/netns.ts), as in the browser
// tests. Needs root, iproute2 and nftables.
//   - recovery: the guest's address changes (Wi-Fi to cellular), or its link
//     is down for --outage-seconds; the time from the change (or from the link
//     coming back) until both sides decode video and receive audio again.
//     Median and worst of --runs, without TURN and relay-only through coturn.
//   - caps: both directions capped at each of --caps kbit/s (tbf); audio
//     packets and video frames per second at both ends over 5 s after 8 s to
//     settle, against the uncapped call measured in the same run, and what
//     the host's quality indicator says.
//   npm run bench:network -- [--runs=5] [--outage-seconds=10] [--caps=300,150,80] [--only=change,outage,caps] [--no-turn]
import type { Page } from 'playwright-core';
// @ts-expect-error plain ESM script without types
import { startCoturn } from '../scripts/coturn.mjs';
import { expectMediaFlowing } from '../test/helpers/browser.js';
import { mediaRate, measureRecovery, startNetworkWorld, waitForStall, type NetworkWorld } from '../test/helpers/netns-world.js';
import { cleanupStale, createGuestNetwork, networkUnavailable, type GuestNetwork } from '../test/helpers/netns.js';
import { fixed, flags, markdownTable, median } from './support/stats.js';

const options = flags();
const runs = Number(options.get('runs') ?? 5);
const outageSeconds = Number(options.get('outage-seconds') ?? 10);
const caps = (options.get('caps') ?? '300,150,80').split(',').map(Number);
const only = (options.get('only') ?? 'change,outage,caps').split(',');
const withTurn = !options.has('no-turn');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Both sides' media back, in ms from `since`. */
async function bothBack(host: Page, guest: Page, since: number): Promise<number> {
  const [g, h] = await Promise.all([measureRecovery(guest, since, 60_000), measureRecovery(host, since, 60_000)]);
  return Math.max(g, h);
}

async function recoveries(world: NetworkWorld, network: GuestNetwork, kind: 'change' | 'outage'): Promise<number[]> {
  const { host, guest } = await world.call();
  await sleep(2000);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    let since: number;
    if (kind === 'change') {
      since = Date.now();
      network.changeAddress();
      await waitForStall(guest);
    } else {
      network.linkDown();
      await sleep(outageSeconds * 1000);
      network.linkUp();
      since = Date.now();
    }
    times.push(await bothBack(host, guest, since));
    console.log(`${kind} ${i + 1}/${runs}: ${times.at(-1)} ms`);
    await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);
    await sleep(3000);
  }
  await world.closeContexts();
  return times;
}

async function capped(world: NetworkWorld, network: GuestNetwork): Promise<(string | number)[][]> {
  const rows: (string | number)[][] = [];
  for (const kbit of [0, ...caps]) {
    const { host, guest } = await world.call();
  await sleep(2000);
    if (kbit > 0) network.cap(kbit);
    await sleep(8000);
    const [atGuest, atHost] = await Promise.all([mediaRate(guest, 5000), mediaRate(host, 5000)]);
    const level = await host.getByTestId('connection-quality').getAttribute('data-level');
    rows.push([
      kbit === 0 ? 'uncapped' : `${kbit} kbit/s`,
      fixed(atGuest.audioPps, 0),
      fixed(atGuest.fps, 1),
      fixed(atHost.audioPps, 0),
      fixed(atHost.fps, 1),
      level ?? '-',
    ]);
    network.uncap();
    await world.closeContexts();
  }
  return rows;
}

async function main() {
  const reason = networkUnavailable();
  if (reason) throw new Error(reason);
  cleanupStale();
  const network = createGuestNetwork();
  const secret = 'bench-turn-secret-0123456789';
  const turn = withTurn ? await startCoturn({ secret, address: network.hostAddress }) : null;
  const configs: [string, Record<string, string>][] = [['direct', {}]];
  if (turn) configs.push(['relay-only (TURN)', { TURN_SECRET: secret, TURN_URLS: turn.url, ICE_TRANSPORT_POLICY: 'relay' }]);
  const recoveryRows: (string | number)[][] = [];
  let capRows: (string | number)[][] = [];
  try {
    for (const [label, env] of configs) {
      const world = await startNetworkWorld(network, env);
      try {
        for (const kind of ['change', 'outage'] as const) {
          if (!only.includes(kind)) continue;
          const times = await recoveries(world, network, kind);
          const what = kind === 'change' ? 'address change' : `${outageSeconds} s outage (from link up)`;
          recoveryRows.push([what, label, times.length, fixed(median(times) / 1000, 2), fixed(Math.max(...times) / 1000, 2), times.map((t) => fixed(t / 1000, 2)).join(' ')]);
          console.log(`${what}, ${label}: ${times.join(', ')} ms`);
        }
        if (label === 'direct' && only.includes('caps')) capRows = await capped(world, network);
      } finally {
        await world.close();
      }
    }
  } finally {
    await turn?.stop();
    network.destroy();
  }
  if (recoveryRows.length) {
    console.log('\nMedia flowing both ways again (s):\n');
    console.log(markdownTable(['what', 'path', 'runs', 'median', 'worst', 'each'], recoveryRows));
  }
  if (capRows.length) {
    console.log('\nAt a cap on both directions (per second, over 5 s after 8 s):\n');
    console.log(markdownTable(['link', 'audio packets at guest', 'video fps at guest', 'audio packets at host', 'video fps at host', 'host\u2019s indicator'], capRows));
  }
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);

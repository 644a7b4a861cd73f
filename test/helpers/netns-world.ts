// A call across a real network link: Parley listening on the root side of a
// guest network (./netns.ts), the host's Chromium in the root namespace and
// the guest's Chromium inside the guest's namespace, so what the test does to
// that link (outage, cap, loss, new address) hits the guest's media and
// signaling alike. Unlike startWorld (./browser.ts) there is no relay on
// 127.0.0.1: the guest's namespace cannot reach the root's loopback, so both
// browsers talk to the server at the veth address.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { loadConfig } from '../../src/config.js';
import { webDistDir } from '../../src/http/routes/web-assets.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { httpJson } from './api.js';
import { CHROMIUM_ARGS, expectMediaFlowing, inboundStats, participantContext, type AnyPage } from './browser.js';
import type { GuestNetwork } from './netns.js';
// @ts-expect-error plain ESM script without types
import { startCoturn } from '../../scripts/coturn.mjs';

export interface NetworkWorld {
  /** http://<network.hostAddress>:<port>: PUBLIC_URL, so the join URLs and the allowed WebSocket origin. */
  base: string;
  server: RunningServer;
  network: GuestNetwork;
  api(method: string, url: string, body?: unknown): Promise<{ status: number; json: any }>;
  createRoom(overrides?: Record<string, unknown>): Promise<Record<string, any>>;
  /** A participant whose Chromium runs in the root namespace (beside the server). */
  hostPage(): Promise<Page>;
  /** A participant whose Chromium runs inside the guest's namespace. */
  guestPage(): Promise<Page>;
  /** A fresh room with the host (root namespace) and the guest (its own namespace) in a call, media flowing both ways. */
  call(names?: { host: string; guest: string }): Promise<{ room: Record<string, any>; host: Page; guest: Page }>;
  closeContexts(): Promise<void>;
  close(): Promise<void>;
}

/** A port free on `host` now (the server's PUBLIC_URL must name its port before it listens). */
export async function freePort(host: string): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => probe.once('error', reject).listen(0, host, resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

export async function startNetworkWorld(network: GuestNetwork, env: Record<string, string> = {}): Promise<NetworkWorld> {
  if (!webDistDir()) throw new Error('The front end is not built: run `npm run build` (or npx vite build --config web/vite.config.ts)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-netns-'));
  const host = network.hostAddress;
  const port = await freePort(host);
  const base = `http://${host}:${port}`;
  // PATH: SFU's default follows npm start's (janus when a janus binary is installed).
  const config = loadConfig({ PORT: String(port), HOST: host, DATA_DIR: dataDir, PUBLIC_URL: base, LOG_LEVEL: 'warn', PATH: process.env.PATH ?? '', ...env });
  const quiet = new Writable({ write: (_c, _e, done) => done() });
  const server = await startServer(config, { announce: () => {}, logStream: quiet });
  const tenant = await server.services.tenants.createTenant({ name: 'Network tests' });
  const { token } = await server.services.tenants.issueToken(tenant.id, {});
  const api = (method: string, url: string, body?: unknown) => httpJson(server.url, token, method, url, body);

  // An http:// origin other than localhost is not a secure context: no getUserMedia without this flag.
  const args = [...CHROMIUM_ARGS, `--unsafely-treat-insecure-origin-as-secure=${base}`];
  const browsers: Browser[] = [];
  const launch = async (executablePath: string) => {
    const browser = await chromium.launch({ executablePath, headless: true, args });
    browsers.push(browser);
    return browser;
  };
  const contexts: BrowserContext[] = [];
  const closeContexts = async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close().catch(() => {})));
  };
  const page = async (browser: Browser) => {
    const context = await participantContext(browser);
    contexts.push(context);
    return context.newPage();
  };
  let hostBrowser: Browser, guestBrowser: Browser;
  try {
    [hostBrowser, guestBrowser] = await Promise.all([launch('/usr/bin/chromium'), launch(network.chromiumWrapper())]);
  } catch (error) {
    await Promise.all(browsers.map((b) => b.close().catch(() => {})));
    await server.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }

  async function createRoom(overrides: Record<string, unknown> = {}) {
    const res = await api('POST', '/api/rooms', { name: 'Consultation', meeting_duration: 30, scheduled_at: new Date().toISOString(), ...overrides });
    if (res.status !== 201) throw new Error(`room not created: ${res.status} ${JSON.stringify(res.json)}`);
    return res.json;
  }

  return {
    base,
    server,
    network,
    api,
    createRoom,
    hostPage: () => page(hostBrowser),
    guestPage: () => page(guestBrowser),
    async call(names = { host: 'Host', guest: 'Guest' }) {
      const room = await createRoom();
      const [host, guest] = await Promise.all([page(hostBrowser), page(guestBrowser)]);
      await joinCall(host, room.host_join_url, names.host);
      await joinCall(guest, room.guest_join_url, names.guest);
      await Promise.all([expectMediaFlowing(host, 45_000), expectMediaFlowing(guest, 45_000)]);
      return { room, host, guest };
    },
    closeContexts,
    async close() {
      await closeContexts();
      // The guest's browser first: a process left inside the namespace would keep it alive.
      await Promise.all(browsers.map((b) => b.close().catch(() => {})));
      await server.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Joins from `url`. The page's `load` event was seen to time out over the
 * veth (test/README.md, "Real networks"), so: navigation committed, then the Join button.
 */
export async function joinCall(page: Page, url: string, name?: string): Promise<void> {
  await page.goto(url, { waitUntil: 'commit' });
  await page.getByTestId('join-button').waitFor();
  if (name !== undefined) await page.getByTestId('name-input').fill(name);
  await page.getByTestId('join-button').click();
  await page.getByTestId('leave-button').waitFor();
}

/**
 * Milliseconds from `sinceMs` (a Date.now(), e.g. when the link came back) until
 * the page decodes remote video AND receives remote audio again: both totals
 * grow past what they were at the first poll. Polls every 100 ms. A peer
 * connection replaced meanwhile starts its counters at zero, so a total that
 * falls counts what follows from zero.
 */
export async function measureRecovery(page: AnyPage, sinceMs: number, timeoutMs = 30_000): Promise<number> {
  let last = await inboundStats(page);
  const grown = { video: 0, audio: 0 };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = await inboundStats(page);
    grown.video += now.framesDecoded >= last.framesDecoded ? now.framesDecoded - last.framesDecoded : now.framesDecoded;
    grown.audio += now.audioPackets >= last.audioPackets ? now.audioPackets - last.audioPackets : now.audioPackets;
    last = now;
    if (grown.video > 0 && grown.audio > 0) return Date.now() - sinceMs;
    if (Date.now() > deadline) {
      throw new Error(`media did not come back within ${timeoutMs} ms: grew by ${grown.video} frames, ${grown.audio} audio packets (now ${JSON.stringify(now)})`);
    }
  }
}

/**
 * Resolves once the page has decoded no video and received no audio for
 * 300 ms: a change to the network has bitten (what follows is a recovery,
 * not frames still in the jitter buffer).
 */
export async function waitForStall(page: AnyPage, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = await inboundStats(page);
  let quietSince = Date.now();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = await inboundStats(page);
    if (now.framesDecoded !== last.framesDecoded || now.audioPackets !== last.audioPackets) quietSince = Date.now();
    else if (Date.now() - quietSince >= 300) return;
    last = now;
  }
  throw new Error(`media never stopped within ${timeoutMs} ms (now ${JSON.stringify(last)})`);
}

/** Remote video frames decoded and audio packets received per second over `ms` (the call's steady state). */
export async function mediaRate(page: AnyPage, ms: number): Promise<{ fps: number; audioPps: number; frames: number; audioPackets: number }> {
  const before = await inboundStats(page);
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = await inboundStats(page);
  const frames = after.framesDecoded - before.framesDecoded;
  const audioPackets = after.audioPackets - before.audioPackets;
  return { fps: (frames * 1000) / ms, audioPps: (audioPackets * 1000) / ms, frames, audioPackets };
}

export interface TurnWorld {
  network: GuestNetwork;
  world: NetworkWorld;
  turn: { url: string; stop(): Promise<void> };
  /** Stops the world and coturn and removes the namespace; never throws. */
  close(): Promise<void>;
}

/**
 * A guest network, coturn on its veth address (the only one both browsers
 * reach) with a REST secret, and a world whose participants get TURN
 * credentials for it; `env` adds to the server's settings (ICE_TRANSPORT_POLICY...).
 */
export async function startTurnWorld(createNetwork: () => GuestNetwork, env: Record<string, string> = {}): Promise<TurnWorld> {
  const secret = 'turn-test-secret-0123456789';
  const network = createNetwork();
  let turn: TurnWorld['turn'] | undefined;
  try {
    turn = (await startCoturn({ secret, address: network.hostAddress })) as TurnWorld['turn'];
    const world = await startNetworkWorld(network, { TURN_SECRET: secret, TURN_URLS: turn.url, ...env });
    const started = turn;
    return {
      network,
      world,
      turn: started,
      close: async () => {
        try {
          await world.close();
          await started.stop();
        } finally {
          network.destroy();
        }
      },
    };
  } catch (error) {
    await turn?.stop().catch(() => {});
    network.destroy();
    throw error;
  }
}


// Browser tests: a real Parley (startServer, embedded database in a temp dir)
// behind a small TCP relay that lets a test cut every connection at once, and
// headless Debian Chromium with fake camera and microphone (test/README.md, "Launching Chromium");
// and a stand-in for an integrator's web site (startSite) for the embedding tests.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { Page as FirefoxPage } from 'puppeteer-core';
import { loadConfig } from '../../src/config.js';
import { webDistDir } from '../../src/http/routes/web-assets.js';
import { startServer, type RunningServer } from '../../src/server.js';
import { httpJson } from './api.js';
import { seedMigratedDataDir } from './database.js';

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
  '--autoplay-policy=no-user-gesture-required',
  '--allow-loopback-in-peer-connection',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** A TCP relay on 127.0.0.1: the browser talks to it, it talks to the server. */
export interface Relay {
  port: number;
  target: number;
  /** Destroys every open connection, like a network blip (new ones are accepted again). */
  cut(): void;
  close(): Promise<void>;
}

export async function startRelay(): Promise<Relay> {
  const sockets = new Set<net.Socket>();
  const relay: Relay = {
    port: 0,
    target: 0,
    cut() {
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(relay.target, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => {
        sockets.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  relay.port = (server.address() as net.AddressInfo).port;
  return relay;
}

export interface BrowserWorld {
  base: string;
  server: RunningServer;
  relay: Relay;
  browser: Browser;
  apiToken: string;
  api(method: string, url: string, body?: unknown): Promise<{ status: number; json: any }>;
  createRoom(overrides?: Record<string, unknown>): Promise<Record<string, any>>;
  /** A participant: its own browser context (test/README.md, "One browser context per participant"). */
  participant(options?: { viewport?: { width: number; height: number } }): Promise<Page>;
  /** A new room with a host and a guest joined under these names, media flowing both ways. */
  twoPersonCall(names: { host: string; guest: string }): Promise<{ room: Record<string, any>; host: Page; guest: Page }>;
  closeContexts(): Promise<void>;
  close(): Promise<void>;
}

export async function startWorld(env: Record<string, string> = {}): Promise<BrowserWorld> {
  if (!webDistDir()) throw new Error('The front end is not built: run `npm run build` (or npx vite build --config web/vite.config.ts)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-browser-'));
  // A migrated database to start from (no initdb, no migrations), and Chromium launching meanwhile.
  await seedMigratedDataDir(dataDir);
  const launching = chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
  launching.catch(() => {});
  const relay = await startRelay();
  const base = `http://127.0.0.1:${relay.port}`;
  const config = loadConfig({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    PUBLIC_URL: base,
    LOG_LEVEL: 'warn',
    ROOM_END_GRACE_SECONDS: '1',
    HEARTBEAT_INTERVAL_SECONDS: '1',
    // SFU's default follows npm start's: janus when a janus binary is on PATH (a local Janus for this world).
    PATH: process.env.PATH ?? '',
    ...env,
  });
  const quiet = new Writable({ write: (_c, _e, done) => done() });
  const server = await startServer(config, { announce: () => {}, logStream: quiet }).catch(async (error: unknown) => {
    await launching.then((browser) => browser.close()).catch(() => {});
    throw error;
  });
  relay.target = Number(new URL(server.url).port);
  const tenant = await server.services.tenants.createTenant({ name: 'Browser tests' });
  const { token: apiToken } = await server.services.tenants.issueToken(tenant.id, {});
  const browser = await launching;
  const contexts: BrowserContext[] = [];

  const api = (method: string, url: string, body?: unknown) => httpJson(server.url, apiToken, method, url, body);

  const world: BrowserWorld = {
    base,
    server,
    relay,
    browser,
    apiToken,
    api,
    async createRoom(overrides = {}) {
      const res = await api('POST', '/api/rooms', {
        name: 'Consultation',
        meeting_duration: 30,
        scheduled_at: new Date().toISOString(),
        ...overrides,
      });
      if (res.status !== 201) throw new Error(`room not created: ${res.status} ${JSON.stringify(res.json)}`);
      return res.json;
    },
    async participant(options = {}) {
      const context = await participantContext(browser, options.viewport);
      contexts.push(context);
      return context.newPage();
    },
    async twoPersonCall(names) {
      const room = await world.createRoom();
      const host = await world.participant();
      const guest = await world.participant();
      await join(host, room.host_join_url, names.host);
      await join(guest, room.guest_join_url, names.guest);
      await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);
      return { room, host, guest };
    },
    async closeContexts() {
      await Promise.all(contexts.splice(0).map((c) => c.close()));
    },
    async close() {
      await Promise.all(contexts.splice(0).map((c) => c.close()));
      await browser.close();
      await server.close();
      await relay.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return world;
}

/**
 * An init script for a participant's pages: keeps every RTCPeerConnection the
 * page makes in window.__pcs, so that a test can read getStats(). Chromium's
 * contexts (addInitScript) and Firefox's pages (evaluateOnNewDocument) run it alike.
 */
export function keepPeerConnections(): void {
  const Native = window.RTCPeerConnection;
  const all: RTCPeerConnection[] = [];
  (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs = all;
  window.RTCPeerConnection = class extends Native {
    constructor(config?: RTCConfiguration) {
      super(config);
      all.push(this);
      // Marked when given a remote description: Firefox refuses to read remoteDescription of a closed connection.
      const setRemote = this.setRemoteDescription.bind(this);
      this.setRemoteDescription = ((description: RTCSessionDescriptionInit) => {
        (this as unknown as { __remote: boolean }).__remote = true;
        return setRemote(description);
      }) as RTCPeerConnection['setRemoteDescription'];
    }
  } as typeof RTCPeerConnection;
}

/** The signaling messages a page sends and receives on its sockets, parsed (listening from before it loads). */
export function signalingFrames(page: Page): { sent: any[]; received: any[] } {
  const seen = { sent: [] as any[], received: [] as any[] };
  page.on('websocket', (socket) => {
    socket.on('framesent', ({ payload }) => seen.sent.push(JSON.parse(String(payload))));
    socket.on('framereceived', ({ payload }) => seen.received.push(JSON.parse(String(payload))));
  });
  return seen;
}

/**
 * The peer connections of the call a page made (window.__pcs), oldest first:
 * those that were given a remote description. The join screen's network check makes
 * one too, which never does.
 */
export function callConnectionStates(page: AnyPage): Promise<RTCPeerConnectionState[]> {
  return (page as Page).evaluate(() =>
    (window as unknown as { __pcs: (RTCPeerConnection & { __remote?: boolean })[] }).__pcs.filter((pc) => pc.__remote).map((pc) => pc.connectionState),
  );
}

/**
 * Counts the Web Audio tones a page starts (the host's chime, the speaker
 * test): an init script wraps OscillatorNode.start. Returns the reader.
 */
export async function countTones(page: Page): Promise<() => Promise<number>> {
  await page.addInitScript(() => {
    const start = OscillatorNode.prototype.start;
    (window as unknown as { __tones: number }).__tones = 0;
    OscillatorNode.prototype.start = function (...args: Parameters<typeof start>) {
      (window as unknown as { __tones: number }).__tones++;
      return start.apply(this, args);
    };
  });
  return () => page.evaluate(() => (window as unknown as { __tones: number }).__tones);
}

/** A browser context for one participant that keeps every RTCPeerConnection its pages make, so a test can read getStats(). */
export async function participantContext(browser: Browser, viewport = { width: 1024, height: 720 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport });
  await context.addInitScript(keepPeerConnections);
  return context;
}

export interface InboundStats {
  framesDecoded: number;
  audioPackets: number;
}

/** A participant's page in either engine: Chromium through playwright, Firefox through puppeteer. */
export type AnyPage = Page | FirefoxPage;

/** Inbound media of each of the page's open peer connections: decoded video frames and received audio packets. */
export async function inboundStatsByConnection(page: AnyPage): Promise<InboundStats[]> {
  // Both libraries evaluate a function without arguments the same way; their signatures differ in generics only.
  return (page as { evaluate(fn: () => Promise<InboundStats[]>): Promise<InboundStats[]> }).evaluate(async () => {
    const all: InboundStats[] = [];
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState === 'closed') continue;
      const one = { framesDecoded: 0, audioPackets: 0 };
      const stats = await pc.getStats();
      stats.forEach((s) => {
        if (s.type !== 'inbound-rtp') return;
        if (s.kind === 'video') one.framesDecoded += s.framesDecoded ?? 0;
        if (s.kind === 'audio') one.audioPackets += s.packetsReceived ?? 0;
      });
      all.push(one);
    }
    return all;
  });
}

/** Inbound media of the page's open peer connections together. */
export async function inboundStats(page: AnyPage): Promise<InboundStats> {
  const all = await inboundStatsByConnection(page);
  return {
    framesDecoded: all.reduce((n, s) => n + s.framesDecoded, 0),
    audioPackets: all.reduce((n, s) => n + s.audioPackets, 0),
  };
}

/**
 * Types of the local and remote candidates of each connection's selected pair,
 * the local one's address ("ip:port") and, for a relay, how it reaches its TURN server (udp, tcp, tls).
 */
export async function selectedPairs(page: Page): Promise<{ local: string; remote: string; localAddress: string; relayProtocol?: string }[]> {
  return page.evaluate(async () => {
    const pairs: { local: string; remote: string; localAddress: string; relayProtocol?: string }[] = [];
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState !== 'connected') continue;
      const stats = await pc.getStats();
      const byId = new Map<string, any>();
      stats.forEach((s) => byId.set(s.id, s));
      stats.forEach((s) => {
        if (s.type === 'transport' && s.selectedCandidatePairId) {
          const pair = byId.get(s.selectedCandidatePairId);
          const local = byId.get(pair.localCandidateId);
          pairs.push({
            local: local?.candidateType,
            remote: byId.get(pair.remoteCandidateId)?.candidateType,
            localAddress: `${local?.address}:${local?.port}`,
            relayProtocol: local?.relayProtocol,
          });
        }
      });
    }
    return pairs;
  });
}

/**
 * What each of the call's open connections may send, as the page's own
 * quality sample reads it (web/src/in-call/quality.ts): the state, the
 * selected pair's availableOutgoingBitrate in kbit/s, and why the video
 * encoder holds back. For a failing test to print. Chromium only.
 */
export async function sendEstimates(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const lines: string[] = [];
    for (const pc of (window as unknown as { __pcs: (RTCPeerConnection & { __remote?: boolean })[] }).__pcs) {
      if (!pc.__remote || pc.connectionState === 'closed') continue;
      const stats = await pc.getStats();
      let kbps = '?';
      let limitation = '?';
      const byId = new Map<string, any>();
      stats.forEach((s) => byId.set(s.id, s));
      stats.forEach((s) => {
        const pair = s.type === 'transport' && s.selectedCandidatePairId ? byId.get(s.selectedCandidatePairId) : undefined;
        if (typeof pair?.availableOutgoingBitrate === 'number') kbps = String(Math.round(pair.availableOutgoingBitrate / 1000));
        if (s.type === 'outbound-rtp' && s.kind === 'video') limitation = s.qualityLimitationReason;
      });
      lines.push(`${pc.connectionState} ${kbps} kbit/s, video limited by ${limitation}`);
    }
    return lines;
  });
}

/**
 * What carries each open connection's media, for a failing test to print: its
 * state and its nominated, succeeded candidate pairs as "local -> remote"
 * (address:port type/protocol). Both engines: Firefox names no selected pair on
 * the transport, so the pairs are read as they are.
 */
export async function connectionPaths(page: AnyPage): Promise<string[]> {
  return (page as { evaluate(fn: () => Promise<string[]>): Promise<string[]> }).evaluate(async () => {
    const lines: string[] = [];
    for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
      if (pc.connectionState === 'closed') continue;
      const stats = await pc.getStats();
      const byId = new Map<string, any>();
      stats.forEach((s) => byId.set(s.id, s));
      const end = (c: any) => (c ? `${c.address ?? c.ip}:${c.port} ${c.candidateType}/${c.protocol}` : '?');
      const pairs: string[] = [];
      stats.forEach((s) => {
        if (s.type === 'candidate-pair' && s.nominated && s.state === 'succeeded') pairs.push(`${end(byId.get(s.localCandidateId))} -> ${end(byId.get(s.remoteCandidateId))}`);
      });
      lines.push(`${pc.connectionState} (ice ${pc.iceConnectionState}): ${pairs.join('; ') || 'no nominated pair'}`);
    }
    return lines;
  });
}

/**
 * Starts watching the page's reconnecting banner (data-testid="reconnecting");
 * the returned function tells whether it has shown since, even for a moment.
 */
export async function watchBanner(page: Page): Promise<() => Promise<boolean>> {
  await page.evaluate(() => {
    const banner = document.querySelector('[data-testid="reconnecting"]') as HTMLElement;
    const seen = window as unknown as { __bannerShown: boolean };
    seen.__bannerShown = !banner.hidden;
    new MutationObserver(() => {
      if (!banner.hidden) seen.__bannerShown = true;
    }).observe(banner, { attributes: true });
  });
  return () => page.evaluate(() => (window as unknown as { __bannerShown: boolean }).__bannerShown);
}

/** The TURN username ("<expiry>:<user>") each of the page's call connections is configured with. */
export function turnUsernames(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    (window as unknown as { __pcs: (RTCPeerConnection & { __remote?: boolean })[] }).__pcs
      .filter((pc) => pc.__remote)
      .flatMap((pc) => pc.getConfiguration().iceServers ?? [])
      .flatMap((server) => (server.username ? [server.username] : [])),
  );
}

/** When a TURN username (coturn's REST scheme) stops being valid, in ms since the epoch. */
export const expiryOf = (username: string) => Number(username.split(':')[0]) * 1000;

/** Waits until the page decodes remote video and receives remote audio. */
export async function expectMediaFlowing(page: AnyPage, timeoutMs = 30_000): Promise<InboundStats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const stats = await inboundStats(page);
    if (stats.framesDecoded > 0 && stats.audioPackets > 0) return stats;
    if (Date.now() > deadline) throw new Error(`no remote media within ${timeoutMs} ms: ${JSON.stringify(stats)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function join(page: Page, url: string, name?: string): Promise<void> {
  await page.goto(url);
  await pressJoin(page, name);
}

/** On the join screen already open: the name typed (if given), Join pressed, and the call's screen there. */
export async function pressJoin(page: Page, name?: string): Promise<void> {
  if (name !== undefined) await page.getByTestId('name-input').fill(name);
  await page.getByTestId('join-button').click();
  await page.getByTestId('leave-button').waitFor();
}

const axeSource = fs.readFileSync(path.resolve('node_modules/axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page (evaluated through the DevTools protocol: the page's CSP stays on). */
export async function axeViolations(page: Page): Promise<{ id: string; impact: string; nodes: number }[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe.run();
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
  });
}

// A stand-in for an integrator's web site in the browser security tests: a
// plain HTTP server on its own loopback port (so its own origin), serving
// what the test renders, and keeping every page it was asked for.

export interface Site {
  origin: string;
  /** Paths (with query) of the pages requested so far, in order; not the browser's own favicon fetches. */
  hits: string[];
  close(): Promise<void>;
}

/**
 * `host`: the name the site is reached by. `localhost` makes it another *site*
 * than a Parley on 127.0.0.1 (not only another origin): a browser then treats
 * the framed join page as third-party (its storage may be refused), as an
 * integrator's real site does.
 */
export async function startSite(render: (url: URL) => string, options: { host?: 'localhost' | '127.0.0.1' } = {}): Promise<Site> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    // Chromium fetches a site's favicon after some navigations and not others: not a page the test sent it to.
    if (url.pathname === '/favicon.ico') return res.writeHead(404).end();
    hits.push(url.pathname + url.search);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(render(url));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://${options.host ?? '127.0.0.1'}:${(server.address() as net.AddressInfo).port}`,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** HTML-escapes an attribute value. */
export const attr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

// Two Parley node processes on one PostgreSQL and one Redis, with Chromium
// participants: what the cluster tests that break a dependency mid-call share
// (test/cluster/*-outage-call.test.ts). Pages open each node directly (host
// on A, guest on B), so a call always crosses nodes. Every wait is bounded.
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
// @ts-expect-error plain ESM script without types
import { freePort } from '../../scripts/postgres.mjs';
import { httpJson } from './api.js';
import { CHROMIUM_ARGS, inboundStatsByConnection, join, participantContext } from './browser.js';
import { startTestJanus } from './janus.js';
import { adminTenantToken, startServerProcess, stopServerProcess, type ServerProcess } from './server-process.js';
import { sleep } from './wait.js';

export interface TwoNodes {
  a: ServerProcess;
  b: ServerProcess;
  /** The REST API (Instance token of a fresh tenant), through node A. */
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  createRoom(): Promise<Record<string, any>>;
  /** A participant in a browser context of its own. */
  participant(): Promise<Page>;
  /** A new room's call: its host on node A, its guest on node B, media flowing both ways. */
  call(): Promise<{ room: Record<string, any>; host: Page; guest: Page }>;
  close(): Promise<void>;
}

export async function startTwoNodes(env: Record<string, string>): Promise<TwoNodes> {
  const ports: number[] = [await freePort(), await freePort()];
  // PARLEY_TEST_SFU=janus (the runner's environment): both nodes share a Janus of the test's own, to run the
  // cluster's calls through the SFU. Otherwise REDIS_URL without JANUS_URLS keeps SFU's default off.
  const janus = process.env.PARLEY_TEST_SFU === 'janus' && !env.SFU ? await startTestJanus() : null;
  const common = {
    PUBLIC_URL: `http://127.0.0.1:${ports[0]}`,
    ALLOWED_ORIGINS: ports.map((p) => `http://127.0.0.1:${p}`).join(','),
    HEARTBEAT_INTERVAL_SECONDS: '1',
    NODE_DEAD_AFTER_SECONDS: '4',
    ROOM_END_GRACE_SECONDS: '2',
    RATE_LIMIT_PER_MINUTE: '0',
    ...(janus ? { SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret } : {}),
    ...env,
  };
  const started: ServerProcess[] = [];
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  const close = async () => {
    await Promise.all(contexts.splice(0).map((c) => c.close()));
    await browser?.close();
    for (const node of started) await stopServerProcess(node, 'SIGKILL');
    await janus?.stop();
  };
  try {
    for (const [i, id] of ['node-a', 'node-b'].entries()) started.push(await startServerProcess({ ...common, NODE_ID: id }, { port: ports[i]! }));
    const [a, b] = started as [ServerProcess, ServerProcess];
    const { token } = await adminTenantToken(a.url);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS });
    const api = (method: string, path: string, body?: unknown) => httpJson(a.url, token, method, path, body);
    const createRoom = async () => {
      const created = await api('POST', '/api/rooms', { name: 'Consultation', meeting_duration: 30, scheduled_at: new Date().toISOString() });
      if (created.status !== 201) throw new Error(`room not created: ${created.status} ${JSON.stringify(created.json)}`);
      return created.json;
    };
    const participant = async () => {
      const context = await participantContext(browser!);
      contexts.push(context);
      return context.newPage();
    };
    return {
      a,
      b,
      api,
      createRoom,
      participant,
      async call() {
        const room = await createRoom();
        const [host, guest] = [await participant(), await participant()];
        await join(host, `${a.url}/join/${room.access_token}`, 'Dr. Ada');
        await join(guest, `${b.url}/join/${room.guest_token}`, 'Pat');
        await Promise.all([expectFlowingFrom(host, 1, 45_000), expectFlowingFrom(guest, 1, 45_000)]);
        return { room, host, guest };
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Waits until the page receives video and audio from at least `peers` others: counted by received stream,
 * so that a subscription through the SFU (everyone's media on one connection) counts each person in it.
 */
export async function expectFlowingFrom(page: Page, peers: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const all = await inboundStatsByConnection(page);
    const streams = await page.evaluate(async () => {
      const counts = { video: 0, audio: 0 };
      for (const pc of (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs) {
        if (pc.connectionState === 'closed') continue;
        (await pc.getStats()).forEach((s) => {
          if (s.type === 'inbound-rtp' && s.kind === 'video' && (s.framesDecoded ?? 0) > 0) counts.video++;
          if (s.type === 'inbound-rtp' && s.kind === 'audio' && (s.packetsReceived ?? 0) > 0) counts.audio++;
        });
      }
      return counts;
    });
    if (Math.min(streams.video, streams.audio) >= peers) return;
    if (Date.now() > deadline) throw new Error(`media from ${peers} peer(s) not flowing within ${timeoutMs} ms: ${JSON.stringify(all)}`);
    await sleep(100);
  }
}

/** Sends a chat message through the page's form; its own line shows at once (sending, then sent or not sent). */
export async function sendChat(page: Page, text: string): Promise<void> {
  await page.getByTestId('chat-input').fill(text);
  await page.getByTestId('chat-send').click();
}

/** What a sender's own line of `text` became: 'sent', 'failed' (Not sent, with Retry) or 'sending'. */
export async function chatOutcome(page: Page, text: string, timeoutMs = 15_000): Promise<'sent' | 'failed'> {
  const line = page.getByTestId('chat-message').filter({ hasText: text });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await line.getAttribute('data-status');
    if (status === null) return 'sent';
    if (status === 'failed') return 'failed';
    if (Date.now() > deadline) throw new Error(`the chat message "${text}" is still ${status} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** The chat lines the page shows, as text. */
export const chatLines = (page: Page) => page.getByTestId('chat-message').allTextContents();

export interface HealthSample {
  url: string;
  status: number | null;
  body: string;
  ms: number;
}

/**
 * Asks /healthz and /readyz of every node every 250 ms until stopped, keeping
 * each answer and how long it took (a request gets up to 5 s: a stalled
 * answer is measured, not cut short at the limit under test).
 */
export function watchHealth(bases: string[]): { samples: HealthSample[]; stop(): Promise<HealthSample[]> } {
  const samples: HealthSample[] = [];
  let stopped = false;
  const ask = async (url: string) => {
    const started = performance.now();
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
      samples.push({ url, status: res.status, body: await res.text(), ms: performance.now() - started });
    } catch (error) {
      samples.push({ url, status: null, body: String(error), ms: performance.now() - started });
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await Promise.all(bases.flatMap((base) => [ask(`${base}/healthz`), ask(`${base}/readyz`)]));
      await sleep(250);
    }
  })();
  return {
    samples,
    async stop() {
      stopped = true;
      await loop;
      return samples;
    },
  };
}

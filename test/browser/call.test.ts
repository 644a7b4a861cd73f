// A whole call in real headless Chromium: host and guest join from their
// URLs, see and hear each other, chat, share a screen, invite a third person,
// leave, give feedback and land on their return URLs; the room ends. Every
// event of the call reaches a webhook receiver once, signed (docs/webhooks.md),
// and the sessions hold what each browser measured.
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { axeViolations, expectMediaFlowing, join, startWorld, type BrowserWorld } from '../helpers/browser.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

let world: BrowserWorld;
let room: Record<string, any>;
let host: Page;
let guest: Page;
let receiver: WebhookReceiver;
let webhookSecret: string;
const cspErrors: string[] = [];
/** The frames the guest's page sent on its signaling connections, parsed. */
const guestFrames: Record<string, any>[] = [];

beforeAll(async () => {
  // The receiver is on 127.0.0.1.
  // SFU off: this file is the peer-to-peer call (its third person comes and goes as a mesh peer); the SFU path
  // is sfu-call.test.ts; the network summary of sessions that end on it, sfu-network-summary.test.ts (issue 41).
  world = await startWorld({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', SFU: 'off' });
  receiver = await startWebhookReceiver();
  const endpoint = await world.api('POST', '/api/webhook_endpoints', { url: receiver.url });
  expect(endpoint.status).toBe(201);
  webhookSecret = endpoint.json.secret;
  room = await world.createRoom({
    name: 'Check-up <b>& more</b>',
    return_url: `${world.base}/left?who=guest`,
    host_return_url: `${world.base}/left?who=host`,
    guest_display_name: 'Patient',
  });
  host = await world.participant();
  guest = await world.participant();
  guest.on('websocket', (socket) => socket.on('framesent', ({ payload }) => guestFrames.push(JSON.parse(String(payload)))));
  for (const page of [host, guest]) {
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
  }
}, 180_000); // the world starts in seconds on a quiet machine; far more than the config's minute on a loaded one
/**
 * For each media connection the page has made (keepPeerConnections), in order,
 * whether it is the call's (given a remote description). The join screen's
 * network check (network-check.ts) makes one with no media, at whatever moment
 * its turn comes on a busy machine: it is no call connection and is left out.
 */
const mediaIndexes = (page: Page) =>
  page.evaluate(() =>
    (window as unknown as { __pcs: (RTCPeerConnection & { __remote?: boolean })[] }).__pcs
      .filter((pc) => pc.getTransceivers().length > 0)
      .map((pc) => Boolean(pc.__remote)),
  );
/** How many media connections the page has made. */
const connectionsMade = async (page: Page) => (await mediaIndexes(page)).length;
/** Which of them are the call's (given a remote description), by the order they were made. */
const callConnectionIndexes = async (page: Page) => (await mediaIndexes(page)).flatMap((remote, i) => (remote ? [i] : []));

afterAll(async () => {
  await world?.close();
  await receiver?.close();
});

describe('a call between a host and a guest', () => {
  it('shows the join screen: room name as text, preview, level, devices, pre-filled name', async () => {
    const response = await guest.goto(room.guest_join_url);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(response?.headers()['referrer-policy']).toBe('no-referrer');
    await expect.poll(() => guest.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Check-up <b>& more</b>');
    expect(await guest.locator('h1 b').count()).toBe(0);
    expect(await guest.getByTestId('name-input').inputValue()).toBe('Patient');
    await guest.getByTestId('audio-indicator').waitFor();
    await expect.poll(() => guest.getByTestId('local-video').evaluate((v: HTMLVideoElement) => v.videoWidth), { timeout: 20_000 }).toBeGreaterThan(0);
    // The fake microphone beeps: the level moves within a couple of seconds.
    await expect
      .poll(() => guest.getByTestId('audio-indicator').evaluate((m: HTMLMeterElement) => m.value), { timeout: 15_000, interval: 100 })
      .toBeGreaterThan(0.01);
    expect(await guest.locator('select#camera option').count()).toBeGreaterThan(0);
    expect(await guest.locator('select#microphone option').count()).toBeGreaterThan(0);
    expect(await axeViolations(guest)).toEqual([]);
  });

  it('joins both from their URLs; each decodes the other\u2019s video and receives audio', async () => {
    await join(host, `${room.host_join_url}?name=${encodeURIComponent('Dr. Ada')}`);
    // Each page made its first call connection before the guest's Join (spare-connection.ts prepareConnection;
    // the host, alone in the call, one that can answer: Mesh.readyToAnswer): the guest offers and
    // the host answers with it, and Join makes no other.
    const made = [await connectionsMade(host), await connectionsMade(guest)];
    // The preview becomes the guest's own tile, the same element, and never stops playing (local-tile.ts).
    await guest.getByTestId('local-video').evaluate((v: HTMLVideoElement) => {
      (v as unknown as { preview: boolean }).preview = true;
      v.addEventListener('pause', () => ((window as unknown as { previewPaused: boolean }).previewPaused = true));
    });
    await guest.getByTestId('join-button').click();
    await guest.getByTestId('leave-button').waitFor();
    const [h, g] = await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);
    expect([await connectionsMade(host), await connectionsMade(guest)]).toEqual(made);
    for (const [i, page] of [host, guest].entries()) {
      const calls = await callConnectionIndexes(page);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toBeLessThan(made[i]!);
    }
    expect(h.framesDecoded).toBeGreaterThan(0);
    expect(g.audioPackets).toBeGreaterThan(0);
    // The guest's one offer rode with its join (signaling.md): no `signal` of its own carried another.
    expect(guestFrames.filter((f) => f.type === 'join').map((f) => f.offer)).toEqual([expect.stringMatching(/^v=0\r\n/)]);
    expect(guestFrames.filter((f) => f.type === 'signal' && f.data.description)).toEqual([]);
    // Its candidates were gathered while the join screen showed: they are in that offer (docs/call.md).
    expect(guestFrames.find((f) => f.type === 'join')?.offer).toMatch(/^a=candidate:.* typ host /m);
    // The voice before the picture on a thin link (audio-priority.ts preferAudio), on both sides' call connections.
    for (const page of [host, guest]) {
      const priorities = await page.evaluate(() =>
        (window as unknown as { __pcs: (RTCPeerConnection & { __remote?: boolean })[] }).__pcs
          .filter((pc) => pc.__remote)
          .flatMap((pc) => pc.getSenders().filter((s) => s.track))
          .map((s) => `${s.track!.kind}: ${s.getParameters().encodings.map((e) => `${e.priority}/${e.networkPriority}`).join(', ')}`)
          .sort(),
      );
      expect(priorities).toEqual(['audio: high/high', 'video: low/low']);
    }
    // Each sees itself in the call: its own picture plays (a paused one stays black).
    for (const page of [host, guest]) {
      await expect.poll(() => page.getByTestId('local-video').evaluate((v: HTMLVideoElement) => !v.paused && v.currentTime > 0), { timeout: 15_000 }).toBe(true);
    }
    expect(
      await guest.getByTestId('local-video').evaluate((v: HTMLVideoElement) => ({
        preview: (v as unknown as { preview?: boolean }).preview === true,
        inOwnTile: v.closest('.tile.self') !== null,
        paused: (window as unknown as { previewPaused?: boolean }).previewPaused === true,
      })),
    ).toEqual({ preview: true, inOwnTile: true, paused: false });
    await expect.poll(() => guest.getByTestId('remote-video').evaluate((v: HTMLVideoElement) => v.videoWidth), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await guest.locator('figcaption').allTextContents()).toContain('Dr. Ada');
    const fetched = await world.api('GET', `/api/rooms/${room.token}`);
    expect(fetched.json.status).toBe('started');
    expect(fetched.json.current_participants).toHaveLength(2);
    // The in-call audio indicator is on by default, one per participant.
    expect(await guest.getByTestId('call-audio-indicator').count()).toBe(2);
    expect(await axeViolations(guest)).toEqual([]);
  });

  it('carries chat to the other side', async () => {
    await host.getByTestId('chat-input').fill('Hello <i>there</i>');
    await host.getByTestId('chat-send').click();
    await expect.poll(() => guest.getByTestId('chat-message').allTextContents(), { timeout: 15_000 }).toEqual(['Dr. Ada: Hello <i>there</i>']);
    expect(await guest.locator('[data-testid=chat-message] i').count()).toBe(0);
  });

  it('shares the host\u2019s screen with the guest', async () => {
    const before = (await expectMediaFlowing(guest)).framesDecoded;
    await host.getByTestId('screenshare-button').click();
    const screen = guest.getByTestId('remote-screen');
    await screen.waitFor({ timeout: 15_000 });
    // The fake screen is 1280x720, the fake camera 640x480 (the sender may scale the screen down a little).
    await expect.poll(() => screen.evaluate((v: HTMLVideoElement) => v.videoWidth / v.videoHeight), { timeout: 15_000 }).toBeCloseTo(16 / 9, 1);
    expect((await expectMediaFlowing(guest)).framesDecoded).toBeGreaterThan(before);
    await host.getByTestId('screenshare-button').click();
    await expect.poll(() => guest.getByTestId('remote-screen').count(), { timeout: 20_000 }).toBe(0);
  });

  it('lets a third person in through an invite link made in the call', async () => {
    await host.getByTestId('invite-button').click();
    const link = await host.getByTestId('invite-link').inputValue();
    expect(link).toMatch(new RegExp(`^${world.base}/join/[A-Za-z0-9_-]{43}$`));
    // Guests get no invite control (only the host invites).
    expect(await guest.getByTestId('invite-button').count()).toBe(0);
    const third = await world.participant();
    await join(third, link, 'Interpreter');
    await expectMediaFlowing(third);
    await expect.poll(() => host.getByTestId('remote-video').count(), { timeout: 15_000 }).toBe(2);
    await third.getByTestId('leave-button').click();
    await third.getByTestId('feedback-skip').click();
    await expect.poll(() => host.getByTestId('remote-video').count(), { timeout: 20_000 }).toBe(1);
  });

  it('takes feedback after leaving and sends each to the right return URL; the room ends', async () => {
    // The sessions keep what each browser measured: on a fast machine this call can be over before the
    // pages' first quality sample (every 2 s), which is also what a tile's bars show. Leave once both have one.
    // Every tile starts at `unknown`: a measured level is one of the others.
    const measured = (page: Page) => page.locator('[data-testid="connection-quality"][data-level]:not([data-level="unknown"])').count();
    await expect.poll(async () => Math.min(await measured(guest), await measured(host)), { timeout: 30_000 }).toBeGreaterThan(0);
    await guest.getByTestId('leave-button').click();
    await guest.getByTestId('feedback-good').click();
    await guest.getByTestId('feedback-comment').fill('Clear picture, thanks');
    expect(await axeViolations(guest)).toEqual([]);
    await guest.getByTestId('feedback-submit').click();
    await guest.getByTestId('feedback-thanks').waitFor();
    await guest.waitForURL(`${world.base}/left?who=guest`);

    await host.getByTestId('leave-button').click();
    await host.getByTestId('feedback-skip').click();
    await host.waitForURL(`${world.base}/left?who=host`);

    const feedbacks = await world.api('GET', '/api/room_feedbacks');
    expect(feedbacks.json.room_feedbacks).toEqual([expect.objectContaining({ room_token: room.token, rating: 'good', feedback: 'Clear picture, thanks' })]);
    const summary = await world.api('GET', '/api/room_feedbacks/summary');
    expect(summary.json).toMatchObject({ total: 1, good: 1, neutral: 0, bad: 0 });
    await expect
      .poll(async () => (await world.api('GET', `/api/rooms/${room.token}`)).json.status, { timeout: 20_000, interval: 250 })
      .toBe('ended');
    expect(cspErrors).toEqual([]);
  });

  it('sent every event of the call once, each verified by standardwebhooks', async () => {
    await expect.poll(() => receiver.types().includes('room.ended'), { timeout: 15_000, interval: 250 }).toBe(true);
    const verifier = new Webhook(webhookSecret);
    const events = receiver.received.map((r) =>
      verifier.verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      }) as { type: string; data: { room_token: string; participant_token?: string; role?: string } },
    );
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(receiver.received.length);
    expect(events.every((e) => e.data.room_token === room.token)).toBe(true);
    const count = (type: string) => events.filter((e) => e.type === type).length;
    expect([count('room.started'), count('feedback.created'), count('room.ended')]).toEqual([1, 1, 1]);
    // Host, guest and the invited third person: each joined once and left once.
    const joined = events.filter((e) => e.type === 'participant.joined').map((e) => e.data.participant_token);
    const left = events.filter((e) => e.type === 'participant.left').map((e) => e.data.participant_token);
    expect(joined).toHaveLength(3);
    expect(new Set(joined).size).toBe(3);
    expect([...left].sort()).toEqual([...joined].sort());
    const all = receiver.received.map((r) => r.body).join('\n');
    for (const hidden of [room.access_token, room.guest_token, '/join/']) expect(all).not.toContain(hidden);
  });

  it('keeps each session with what its browser measured', async () => {
    const { json } = await world.api('GET', `/api/rooms/${room.token}/sessions`);
    expect(json.sessions).toHaveLength(3);
    const [first, second] = json.sessions;
    for (const session of [first, second]) {
      expect(session.left_at).not.toBeNull();
      expect(session.duration_seconds).toBeGreaterThan(0);
      // Chromium reports all four figures; the call was direct (no TURN configured).
      // The message names the session: one came back without any report once in CI.
      expect(session.network, `the ${session.role}'s session ${JSON.stringify(session)}`).toMatchObject({ rtt_ms: expect.any(Number), loss_percent: expect.any(Number), bitrate_kbps: expect.any(Number), relayed: false });
      expect(session.network.reports).toBeGreaterThanOrEqual(1);
    }
  });
});

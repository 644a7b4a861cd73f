// Embedding with events and commands (docs/embedding.md), in real Chromium,
// from an integrator page on another *site*: the demo page
// (docs/embed-demo.html) on `localhost` frames Parley on `127.0.0.1`, so the
// join page is a third-party frame and Chromium refuses it storage. A real
// call through <parley-room>: every event (ready, waiting, knock, join,
// participants, microphone and camera, reconnecting during a network cut,
// leave with its reasons, feedback) and every command; a page of an origin
// not on the list, and a frame of one inside an allowed page, get nothing and
// command nothing; fuzzed malformed messages change nothing; no message
// carries a secret. Firefox: embed-firefox.test.ts.
import fc from 'fast-check';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpJson } from '../helpers/api.js';
import { ADMIN_TOKEN } from '../helpers/app.js';
import { expectMediaFlowing, inboundStats, join, keepPeerConnections, startSite, startWorld, type BrowserWorld, type Site } from '../helpers/browser.js';
import { demoPage, demoUrl, leakedSecrets, malformedMessage, recordMessagesAndErrors } from '../helpers/embed.js';
import { traceSteps } from '../helpers/steps.js';
import { RUNS } from '../helpers/arbitraries.js';

type Events = { event: string; detail: Record<string, unknown> }[];

let world: BrowserWorld;
/** The integrator: another site (localhost) than Parley (127.0.0.1). */
let site: Site;
/** An origin on no list: a stranger's page, or a frame of one inside the integrator's page. */
let stranger: Site;
let tenantId: string;
const contexts: BrowserContext[] = [];

/** The integrator's pages: the demo (the element), its own iframe with the raw protocol, a page after the call. */
function integratorPage(url: URL): string {
  if (url.pathname === '/done') return '<!doctype html><title>Done</title><p id="done">Back in the portal</p>';
  const spy = url.searchParams.get('spy') ? `<iframe id="spy" src="${stranger.origin}/spy" width="10" height="10"></iframe>` : '';
  if (url.pathname === '/raw') {
    // docs/embedding.md, "The postMessage protocol", as an integrator who makes the iframe would write it.
    const src = url.searchParams.get('url')!;
    return (
      `<!doctype html><title>Own iframe</title><iframe id="call" src="${src.replace(/"/g, '&quot;')}" allow="camera; microphone; display-capture; fullscreen; autoplay" width="800" height="600"></iframe>${spy}` +
      `<script type="module">const frame = document.getElementById('call'); const origin = new URL(frame.src).origin; window.rawEvents = [];` +
      `addEventListener('message', (event) => { if (event.source !== frame.contentWindow || event.origin !== origin) return; if (event.data?.parley === 1) rawEvents.push(event.data); });` +
      `window.command = (message) => frame.contentWindow.postMessage(message, origin);</script>`
    );
  }
  return demoPage().replace('</body>', `${spy}</body>`);
}

/** The stranger's site: the demo page on an origin no list names, and a frame that posts valid commands to every window it can reach and fake events to its parent. */
const strangerPage = (url: URL) =>
  url.pathname !== '/spy' ? demoPage() : `<!doctype html><title>Stranger</title><script type="module">` +
  `window.attack = () => { const windows = [...Array(parent.frames.length).keys()].map((i) => parent.frames[i]).filter((w) => w !== window);` +
  `for (const w of [...windows, parent, top]) for (const command of ['leave', 'toggle_microphone', 'toggle_camera']) w.postMessage({ parley: 1, command, detail: {} }, '*');` +
  `parent.postMessage({ parley: 1, event: 'leave', detail: { reason: 'left' } }, '*'); parent.postMessage({ parley: 1, event: 'join', detail: { role: 'host', display_name: 'Mallory' } }, '*'); return windows.length; };</script>`;

const admin = (method: string, path: string, body?: unknown) => httpJson(world.server.url, ADMIN_TOKEN, method, path, body);

beforeAll(async () => {
  world = await startWorld({ PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, RECONNECT_GRACE_SECONDS: '20' });
  site = await startSite(integratorPage, { host: 'localhost' });
  stranger = await startSite(strangerPage);
  tenantId = (await admin('GET', '/admin/tenants')).json.tenants.find((t: { name: string }) => t.name === 'Browser tests').id;
  // Two origins: the page must post to the one that frames it, not to every one listed.
  expect((await admin('PUT', `/admin/tenants/${tenantId}/frame-ancestors`, { frame_ancestors: [site.origin, 'https://portal.example'] })).status).toBe(200);
}, 180_000);
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await world?.close();
  await site?.close();
  await stranger?.close();
});

/** A person's browser: its own context, keeping peer connections, messages and errors in every frame. */
async function person(viewport = { width: 1280, height: 800 }): Promise<Page> {
  const context = await world.browser.newContext({ viewport });
  contexts.push(context);
  await context.addInitScript(keepPeerConnections);
  await context.addInitScript(recordMessagesAndErrors);
  return context.newPage();
}

const events = (page: Page) => page.evaluate(() => (window as unknown as { demoEvents: Events }).demoEvents);
const named = async (page: Page, name: string) => (await events(page)).filter((e) => e.event === name).map((e) => e.detail);

/** Waits until the page's element dispatched `name` (with this detail, if given). */
async function waitForEvent(page: Page, name: string, detail?: Record<string, unknown>, timeout = 15_000) {
  await expect.poll(() => named(page, name), { timeout, message: `event ${name} ${JSON.stringify(detail ?? '')}` }).toContainEqual(detail ?? expect.anything());
}

/** The call's frame inside the element's shadow root. */
async function callFrame(page: Page, selector = 'parley-room iframe'): Promise<Frame> {
  const handle = await page.locator(selector).elementHandle();
  const frame = await handle!.contentFrame();
  return frame!;
}

/** The demo page on a join link, the element ready; returns its call frame. */
async function openDemo(page: Page, joinUrl: string, attributes: { name?: string; lang?: string; minimal?: boolean } = {}) {
  await page.goto(demoUrl(site.origin, joinUrl, attributes));
  await waitForEvent(page, 'ready');
  return callFrame(page);
}

const element = (page: Page) => page.locator('parley-room');
const pressed = (frame: Frame, id: string) => frame.getByTestId(id).getAttribute('aria-pressed');
const frameErrors = (frame: Frame) => frame.evaluate(() => (window as unknown as { __errors: string[] }).__errors);

describe('an integrator page on another site embeds the call', () => {
  it('gets every event of a real call, and every command works', async (context) => {
    const step = traceSteps(context);
    const room = await world.createRoom({ enable_waiting_room: true, enable_chat: true, return_url: `${site.origin}/done` });
    const doctor = await person();
    const patient = await person();

    step('the patient opens the integrator page');
    const patientFrame = await openDemo(patient, room.guest_join_url, { name: 'Pat' });
    // A third-party frame: Chromium refuses it storage, and the join page works all the same.
    expect(await patientFrame.evaluate(() => {
      try {
        return typeof window.sessionStorage.getItem('x');
      } catch (error) {
        return (error as Error).name;
      }
    })).toBe('SecurityError');
    expect(await patientFrame.getByTestId('name-input').inputValue()).toBe('Pat');
    await patientFrame.getByTestId('join-button').click();
    await waitForEvent(patient, 'waiting', {});

    step('the doctor joins and is told someone waits');
    const doctorFrame = await openDemo(doctor, room.host_join_url, { name: 'Dr. Ada', minimal: true });
    // minimal: no room name above the join screen (kept for screen readers, in a box of 1 px).
    expect((await doctorFrame.locator('h1.room-name').first().boundingBox())!.height).toBeLessThanOrEqual(1);
    await doctorFrame.getByTestId('join-button').click();
    await waitForEvent(doctor, 'join', { role: 'host', display_name: 'Dr. Ada' });
    await waitForEvent(doctor, 'knock', { display_name: 'Pat' });

    step('admit by name');
    await element(doctor).evaluate((e: HTMLElement & { admit(name?: string): void }) => e.admit('Pat'));
    await waitForEvent(patient, 'join', { role: 'guest', display_name: 'Pat' });
    await waitForEvent(patient, 'participant_join', { role: 'host', display_name: 'Dr. Ada' });
    await waitForEvent(doctor, 'participant_join', { role: 'guest', display_name: 'Pat' });
    await Promise.all([expectMediaFlowing(doctorFrame as never), expectMediaFlowing(patientFrame as never)]);

    step('microphone, camera and chat through the element');
    await element(patient).evaluate((e: HTMLElement & { toggleMicrophone(on?: boolean): void }) => e.toggleMicrophone(false));
    await waitForEvent(patient, 'microphone_toggle', { enabled: false });
    expect(await pressed(patientFrame, 'mute-button')).toBe('true');
    await element(patient).evaluate((e: HTMLElement & { toggleMicrophone(on?: boolean): void }) => e.toggleMicrophone());
    await waitForEvent(patient, 'microphone_toggle', { enabled: true });
    expect(await pressed(patientFrame, 'mute-button')).toBe('false');
    await element(patient).evaluate((e: HTMLElement & { toggleCamera(on?: boolean): void }) => e.toggleCamera());
    await waitForEvent(patient, 'camera_toggle', { enabled: false });
    expect(await pressed(patientFrame, 'camera-button')).toBe('true');
    // The person's own button is told as well.
    await patientFrame.getByTestId('camera-button').click();
    await waitForEvent(patient, 'camera_toggle', { enabled: true });
    const chatOpen = () => patientFrame.getByTestId('chat-input').isVisible();
    const before = await chatOpen();
    await patient.getByRole('button', { name: 'Chat' }).click(); // the demo's button
    await expect.poll(chatOpen, { timeout: 15_000 }).toBe(!before);

    step('a network cut: reconnecting, then connected, as the same participant');
    const participantsBefore = (await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants;
    const target = world.relay.target;
    world.relay.target = 1; // nothing listens there: the pages' reconnections fail until it is back
    world.relay.cut();
    await waitForEvent(patient, 'connection_status_change', { status: 'reconnecting' });
    await waitForEvent(doctor, 'connection_status_change', { status: 'reconnecting' });
    world.relay.target = target;
    await waitForEvent(patient, 'connection_status_change', { status: 'connected' }, 25_000);
    await waitForEvent(doctor, 'connection_status_change', { status: 'connected' }, 25_000);
    // Storage refused, the participant token kept in memory: back as itself, not someone new.
    expect((await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants.sort()).toEqual(participantsBefore.sort());
    expect(await named(doctor, 'participant_leave')).toEqual([]);
    expect(await named(doctor, 'participant_join')).toHaveLength(1);
    const framesBefore = (await inboundStats(patientFrame as never)).framesDecoded;
    await expect.poll(async () => (await inboundStats(patientFrame as never)).framesDecoded, { timeout: 15_000 }).toBeGreaterThan(framesBefore);

    step('a second guest waits and is denied');
    const other = await person();
    const otherFrame = await openDemo(other, room.guest_join_url, { name: 'Sam' });
    await otherFrame.getByTestId('join-button').click();
    await waitForEvent(other, 'waiting', {});
    await waitForEvent(doctor, 'knock', { display_name: 'Sam' });
    await element(doctor).evaluate((e: HTMLElement & { deny(name?: string): void }) => e.deny());
    await waitForEvent(other, 'leave', { reason: 'denied' });

    step('the patient leaves through the element, and rates the call');
    await element(patient).evaluate((e: HTMLElement & { leave(): void }) => e.leave());
    await waitForEvent(patient, 'leave', { reason: 'left' });
    await waitForEvent(doctor, 'participant_leave', { role: 'guest', display_name: 'Pat' });
    await patientFrame.getByTestId('feedback-good').click();
    await patientFrame.getByTestId('feedback-submit').click();
    await waitForEvent(patient, 'feedback', { rating: 'good' });
    // On to the integrator's return page, inside the frame.
    await expect.poll(() => callFrame(patient).then((f) => f.url()), { timeout: 20_000 }).toBe(`${site.origin}/done`);

    step('the room is closed: the doctor is told');
    expect((await world.api('POST', `/api/rooms/${room.token}/close`)).status).toBe(204);
    await waitForEvent(doctor, 'leave', { reason: 'closed' });

    step('nothing secret in any message, no error in any frame');
    const sessions = (await world.api('GET', `/api/rooms/${room.token}/sessions`)).json.sessions as { participant_token: string }[];
    expect(sessions.length).toBeGreaterThanOrEqual(3);
    const secrets = [room.token, room.access_token, room.guest_token, ...sessions.map((s) => s.participant_token)];
    for (const page of [doctor, patient, other]) {
      const seen = JSON.stringify([await events(page), await page.evaluate(() => (window as unknown as { __messages: string[] }).__messages)]);
      expect(leakedSecrets(seen, secrets)).toEqual([]);
      expect(seen).not.toContain('/join/');
      expect(await frameErrors(await callFrame(page).catch(() => page.mainFrame()))).toEqual([]);
    }
    // Every event the doctor's element dispatched is documented, in order of the call.
    expect((await events(doctor)).map((e) => e.event)).toEqual([
      'ready', 'join', 'knock', 'participant_join', 'connection_status_change', 'connection_status_change', 'knock', 'participant_leave', 'leave',
    ]);
  });

  it('posts nothing to, and takes nothing from, an origin not on the list', async (context) => {
    const step = traceSteps(context);
    const room = await world.createRoom();
    step('a stranger frames the link');

    // A page of a stranger's origin frames the link: the CSP refuses the frame, the element hears nothing.
    const outsider = await person();
    const refusals: string[] = [];
    outsider.on('console', (m) => /frame-ancestors/.test(m.text()) && refusals.push(m.text()));
    await outsider.goto(demoUrl(stranger.origin, room.guest_join_url));
    await expect.poll(() => refusals.length, { timeout: 20_000 }).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await events(outsider)).toEqual([]);

    step('an organization narrows the list');
    // An organization narrows the list to another origin: its rooms' pages refuse this site too.
    const org = await world.server.services.tenants.createOrganization(tenantId, { name: 'Narrow' });
    expect((await admin('PUT', `/admin/organizations/${org.id}/frame-ancestors`, { frame_ancestors: ['https://portal.example'] })).status).toBe(200);
    const { token } = await world.server.services.tenants.issueToken(tenantId, { organization_id: org.id });
    const res = await fetch(`${world.server.url}/api/rooms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Narrowed', meeting_duration: 30, scheduled_at: new Date().toISOString() }),
    });
    const narrowed = (await res.json()) as { guest_join_url: string };
    const narrowedPage = await person();
    const narrowedRefusals: string[] = [];
    narrowedPage.on('console', (m) => /frame-ancestors/.test(m.text()) && narrowedRefusals.push(m.text()));
    await narrowedPage.goto(demoUrl(site.origin, narrowed.guest_join_url));
    await expect.poll(() => narrowedRefusals.length, { timeout: 20_000 }).toBeGreaterThan(0);
    expect(narrowedRefusals[0]).toContain('frame-ancestors https://portal.example');
    expect(await events(narrowedPage)).toEqual([]);

    // Inside an allowed page, a frame of a stranger's origin: it hears no event, and its commands and fake events do nothing.
    for (const variant of ['demo', 'raw'] as const) {
      step(`a stranger's frame inside the integrator's page (${variant})`);
      const patient = await person();
      await patient.goto(
        variant === 'demo'
          ? `${demoUrl(site.origin, room.guest_join_url, { name: 'Pat' })}&spy=1`
          : `${site.origin}/raw?spy=1&url=${encodeURIComponent(`${room.guest_join_url}?name=Sam`)}`,
      );
      const frame = await callFrame(patient, variant === 'demo' ? 'parley-room iframe' : '#call');
      await frame.getByTestId('join-button').click();
      await frame.getByTestId('leave-button').waitFor();
      const spy = await callFrame(patient, '#spy');
      await spy.waitForLoadState();
      const reached = await spy.evaluate(() => (window as unknown as { attack(): number }).attack());
      // The raw page's iframe is a window the stranger can reach; the element's is in its shadow root.
      if (variant === 'raw') expect(reached).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(await spy.evaluate(() => (window as unknown as { __messages: string[] }).__messages)).toEqual([]);
      expect(await pressed(frame, 'mute-button')).toBe('false');
      expect(await pressed(frame, 'camera-button')).toBe('false');
      await frame.getByTestId('leave-button').waitFor();
      if (variant === 'demo') {
        expect((await events(patient)).map((e) => e.event)).toEqual(['ready', 'join']);
      } else {
        const raw = await patient.evaluate(() => (window as unknown as { rawEvents: { event: string }[] }).rawEvents);
        // Pat from the demo variant is in the call too.
        expect(raw.map((e) => e.event)).toEqual(['ready', 'join', 'participant_join']);
        // The documented raw protocol works for the page that frames it.
        await patient.evaluate(() => (window as unknown as { command(m: unknown): void }).command({ parley: 1, command: 'toggle_microphone', detail: { enabled: false } }));
        await expect.poll(() => pressed(frame, 'mute-button'), { timeout: 15_000 }).toBe('true');
        await expect
          .poll(() => patient.evaluate(() => (window as unknown as { rawEvents: { event: string; detail: unknown }[] }).rawEvents.at(-1)), { timeout: 15_000 })
          .toEqual({ parley: 1, event: 'microphone_toggle', detail: { enabled: false } });
      }
      expect(await frameErrors(frame)).toEqual([]);
    }
  });

  it('changes nothing on malformed messages from the page that frames it (fuzzed), and obeys the valid one after them', async () => {
    const room = await world.createRoom({ enable_chat: true });
    const patient = await person();
    const frame = await openDemo(patient, room.guest_join_url, { name: 'Pat' });
    await frame.getByTestId('join-button').click();
    await waitForEvent(patient, 'join');
    const doctor = await person();
    await join(doctor, room.host_join_url, 'Dr. Ada');
    await waitForEvent(patient, 'participant_join');
    await expectMediaFlowing(frame as never);
    const eventsBefore = (await events(patient)).length;

    // As JSON text, parsed in the page: what the generator made, own `__proto__` keys and all.
    const values = JSON.stringify(fc.sample(malformedMessage, RUNS * 2));
    const sent = await element(patient).evaluate((e: HTMLElement & { iframe: HTMLIFrameElement }, json: string) => {
      const list = JSON.parse(json) as unknown[];
      const target = e.iframe.contentWindow!;
      const origin = new URL(e.iframe.src).origin;
      // Values JSON cannot carry: classes, prototypes, binary, nesting deeper than any command.
      let deep: unknown = { parley: 1, command: 'leave' };
      for (let i = 0; i < 500; i++) deep = { detail: deep };
      const special: unknown[] = [
        new Date(), new Map<string, unknown>([['parley', 1], ['command', 'leave']]), new Set(['leave']), /leave/, new Blob(['leave']), new ArrayBuffer(16),
        new Uint8Array(8), new Error('leave'), Object.create(null), [{ parley: 1, command: 'leave' }], deep, 'x'.repeat(1_000_000),
        { parley: 1, command: 'leave', detail: new Map() }, { parley: 1, command: 'admit', detail: { display_name: new String('Pat') } },
        { parley: 1n, command: 'leave' }, { parley: 1, command: 'toggle_microphone', detail: { enabled: new Boolean(false) } },
        Object.defineProperty({ parley: 1, command: 'leave' }, '__proto__', { value: { detail: {} }, enumerable: true }),
      ];
      for (const value of [...list, ...special]) target.postMessage(value, origin);
      return list.length + special.length;
    }, values);
    expect(sent).toBeGreaterThan(RUNS);
    // A valid command after them: once it is obeyed, the page has read every message before it (in order).
    await element(patient).evaluate((e: HTMLElement & { toggleMicrophone(on?: boolean): void }) => e.toggleMicrophone(false));
    await waitForEvent(patient, 'microphone_toggle', { enabled: false });

    // Nothing else happened: no error, no other event, the camera as it was, still in the call, media flowing.
    expect(await frameErrors(frame)).toEqual([]);
    expect((await events(patient)).slice(eventsBefore)).toEqual([{ event: 'microphone_toggle', detail: { enabled: false } }]);
    expect(await pressed(frame, 'mute-button')).toBe('true');
    expect(await pressed(frame, 'camera-button')).toBe('false');
    await frame.getByTestId('leave-button').waitFor();
    const stats = (await inboundStats(frame as never)).framesDecoded;
    await expect.poll(async () => (await inboundStats(frame as never)).framesDecoded, { timeout: 20_000 }).toBeGreaterThan(stats);
    expect((await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants).toHaveLength(2);
  });
});

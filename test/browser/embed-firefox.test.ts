// Embedding with events and commands in Firefox ESR (docs/embedding.md), a
// second engine: the demo integrator page on `localhost` frames Parley on
// `127.0.0.1` through <parley-room>, with Firefox blocking all cookies and
// storage (network.cookie.cookieBehavior 2: the join page's sessionStorage
// throws). Two origins are listed: the page posts to the one the browser
// names as its parent (location.ancestorOrigins; Firefox has it too, and an
// instance property that cannot be taken away, so the path for browsers
// without it is tried in web/src/embed-bridge.test.ts). A Chromium doctor on the plain join page. Events of the call (join, the
// doctor joining and leaving, microphone and camera, reconnecting during a
// network cut, leave, feedback), commands, fuzzed malformed messages, a
// stranger's frame, and no secret in any message. Chromium: embed.test.ts.
import fc from 'fast-check';
import type { Browser, BrowserContext, Frame, Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN } from '../helpers/app.js';
import { RUNS } from '../helpers/arbitraries.js';
import { expectMediaFlowing, inboundStats, join, keepPeerConnections, startSite, startWorld, type BrowserWorld, type Site } from '../helpers/browser.js';
import { demoPage, demoUrl, leakedSecrets, malformedMessage, recordMessagesAndErrors } from '../helpers/embed.js';
import { firefoxSkipReason, launchFirefox, testId } from '../helpers/firefox.js';
import { traceSteps } from '../helpers/steps.js';

const skip = firefoxSkipReason();
if (skip) console.warn(skip);

type Events = { event: string; detail: Record<string, unknown> }[];

describe.skipIf(skip !== null)('an integrator page on another site embeds the call, in Firefox with storage blocked', () => {
  let world: BrowserWorld;
  let firefox: Promise<Browser>;
  let site: Site;
  let stranger: Site;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    // All cookies and site storage refused, for every page.
    firefox = launchFirefox({ prefs: { 'network.cookie.cookieBehavior': 2 } });
    firefox.catch(() => {});
    world = await startWorld({ PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, RECONNECT_GRACE_SECONDS: '20' });
    stranger = await startSite(
      () =>
        `<!doctype html><title>Stranger</title><script type="module">window.attack = () => { for (let i = 0; i < parent.frames.length; i++) if (parent.frames[i] !== window)` +
        ` parent.frames[i].postMessage({ parley: 1, command: 'leave', detail: {} }, '*'); parent.postMessage({ parley: 1, event: 'leave', detail: { reason: 'left' } }, '*'); };</script>`,
    );
    site = await startSite((url) => (url.pathname === '/done' ? '<!doctype html><p>Back in the portal</p>' : demoPage().replace('</body>', `<iframe id="spy" src="${stranger.origin}/spy" width="10" height="10"></iframe></body>`)), { host: 'localhost' });
    const tenants = await world.server.services.tenants.listTenants();
    // Two origins: the page posts to the one that frames it, and to no other.
    await world.server.services.tenants.setFrameAncestors(tenants.find((t) => t.name === 'Browser tests')!.id, ['http://localhost:1', site.origin]);
  }, 180_000);
  afterEach(async () => {
    await Promise.allSettled([...contexts.splice(0).map((c) => c.close()), world?.closeContexts()]);
  });
  afterAll(async () => {
    await firefox?.then((b) => b.close(), () => {});
    await world?.close();
    await site?.close();
    await stranger?.close();
  });

  async function firefoxPage(): Promise<Page> {
    const context = await (await firefox).createBrowserContext();
    contexts.push(context);
    const page = await context.newPage({ type: 'window' });
    await page.evaluateOnNewDocument(keepPeerConnections);
    await page.evaluateOnNewDocument(recordMessagesAndErrors);
    return page;
  }

  const events = (page: Page) => page.evaluate(() => (window as unknown as { demoEvents: Events }).demoEvents);
  const named = async (page: Page, name: string) => (await events(page)).filter((e) => e.event === name).map((e) => e.detail);
  const waitForEvent = (page: Page, name: string, detail?: Record<string, unknown>, timeout = 15_000) =>
    expect.poll(() => named(page, name), { timeout, message: `event ${name}` }).toContainEqual(detail ?? expect.anything());
  const callFrame = async (page: Page): Promise<Frame> => {
    await expect.poll(() => page.frames().some((f) => f.url().startsWith(world.base)), { timeout: 20_000 }).toBe(true);
    return page.frames().find((f) => f.url().startsWith(world.base))!;
  };
  const command = (page: Page, method: string, ...args: unknown[]) =>
    page.evaluate((m: string, a: unknown[]) => (document.querySelector('parley-room') as unknown as Record<string, (...x: unknown[]) => void>)[m]!(...a), method, args);
  const pressed = (frame: Frame, id: string) => frame.$eval(testId(id), (e) => e.getAttribute('aria-pressed'));
  const click = async (frame: Frame, id: string) => (await frame.waitForSelector(testId(id), { visible: true }))!.click();

  it('gets the events of a real call, obeys the commands, ignores malformed messages and strangers, and leaks nothing', async (context) => {
    const step = traceSteps(context);
    const room = await world.createRoom({ return_url: `${site.origin}/done` });
    const patient = await firefoxPage();

    step('the patient opens the integrator page in Firefox');
    await patient.goto(demoUrl(site.origin, room.guest_join_url, { name: 'Pat', lang: 'de' }));
    await waitForEvent(patient, 'ready', {});
    const frame = await callFrame(patient);
    expect(await frame.evaluate(() => {
      try {
        return typeof window.sessionStorage.getItem('x');
      } catch (error) {
        return (error as Error).name;
      }
    })).toBe('SecurityError');
    expect(await frame.evaluate(() => document.documentElement.lang)).toBe('de');
    await click(frame, 'join-button');
    await waitForEvent(patient, 'join', { role: 'guest', display_name: 'Pat' });

    step('a Chromium doctor joins');
    const doctor = await world.participant();
    await join(doctor, room.host_join_url, 'Dr. Ada');
    await waitForEvent(patient, 'participant_join', { role: 'host', display_name: 'Dr. Ada' });
    await expectMediaFlowing(frame as never);

    step('commands');
    await command(patient, 'toggleMicrophone', false);
    await waitForEvent(patient, 'microphone_toggle', { enabled: false });
    expect(await pressed(frame, 'mute-button')).toBe('true');
    await command(patient, 'toggleCamera');
    await waitForEvent(patient, 'camera_toggle', { enabled: false });
    expect(await pressed(frame, 'camera-button')).toBe('true');
    await command(patient, 'toggleCamera', true);
    await waitForEvent(patient, 'camera_toggle', { enabled: true });

    step('malformed messages from the page that frames it, and a stranger\u2019s frame inside it');
    const before = (await events(patient)).length;
    // As JSON text: puppeteer's BiDi serializer takes plain objects only.
    const values = JSON.stringify(fc.sample(malformedMessage, RUNS));
    await patient.evaluate((json: string) => {
      const list = JSON.parse(json) as unknown[];
      const room = document.querySelector('parley-room') as HTMLElement & { iframe: HTMLIFrameElement };
      const origin = new URL(room.iframe.src).origin;
      for (const value of [...list, new Date(), new Map([['command', 'leave']]), new Blob(['leave']), [{ parley: 1, command: 'leave' }]]) room.iframe.contentWindow!.postMessage(value, origin);
    }, values);
    const spy = patient.frames().find((f) => f.url().startsWith(stranger.origin))!;
    await spy.evaluate(() => (window as unknown as { attack(): void }).attack());
    await command(patient, 'toggleMicrophone', true);
    await waitForEvent(patient, 'microphone_toggle', { enabled: true });
    expect((await events(patient)).slice(before)).toEqual([{ event: 'microphone_toggle', detail: { enabled: true } }]);
    expect(await spy.evaluate(() => (window as unknown as { __messages: string[] }).__messages)).toEqual([]);
    expect(await frame.$(testId('leave-button'))).not.toBeNull();
    const frames = (await inboundStats(frame as never)).framesDecoded;
    await expect.poll(async () => (await inboundStats(frame as never)).framesDecoded, { timeout: 20_000 }).toBeGreaterThan(frames);

    step('a network cut: reconnecting, then connected, as the same participant');
    const participants = (await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants as string[];
    const target = world.relay.target;
    world.relay.target = 1;
    world.relay.cut();
    await waitForEvent(patient, 'connection_status_change', { status: 'reconnecting' });
    world.relay.target = target;
    await waitForEvent(patient, 'connection_status_change', { status: 'connected' }, 25_000);
    expect(((await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants as string[]).sort()).toEqual(participants.sort());

    step('the doctor leaves, then the patient; feedback');
    await doctor.getByTestId('leave-button').click();
    await waitForEvent(patient, 'participant_leave', { role: 'host', display_name: 'Dr. Ada' });
    await command(patient, 'leave');
    await waitForEvent(patient, 'leave', { reason: 'left' });
    await click(frame, 'feedback-neutral');
    await click(frame, 'feedback-submit');
    await waitForEvent(patient, 'feedback', { rating: 'neutral' });

    step('no secret in any message, no error in any frame');
    const sessions = (await world.api('GET', `/api/rooms/${room.token}/sessions`)).json.sessions as { participant_token: string }[];
    const secrets = [room.token, room.access_token, room.guest_token, ...sessions.map((s) => s.participant_token)];
    const seen = JSON.stringify([await events(patient), await patient.evaluate(() => (window as unknown as { __messages: string[] }).__messages)]);
    expect(leakedSecrets(seen, secrets)).toEqual([]);
    expect(seen).not.toContain('/join/');
    expect(await frame.evaluate(() => (window as unknown as { __errors: string[] }).__errors)).toEqual([]);
    expect((await events(patient)).map((e) => e.event)).toEqual([
      'ready', 'join', 'participant_join', 'microphone_toggle', 'camera_toggle', 'camera_toggle', 'microphone_toggle',
      'connection_status_change', 'connection_status_change', 'participant_leave', 'leave', 'feedback',
    ]);
  });
});

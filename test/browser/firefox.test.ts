// Calls with Firefox, a second engine (puppeteer-core over WebDriver BiDi,
// test/helpers/firefox.ts), on the same server as the Chromium tests: a
// Chromium host with a Firefox guest (two WebRTC stacks negotiating with each
// other), and two Firefox participants. Media is checked in getStats(), not
// only on screen; uncaught errors in the Firefox pages fail the test.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'puppeteer-core';
import { expectMediaFlowing, join, startWorld, type BrowserWorld } from '../helpers/browser.js';
import { clickTestId, fillTestId, firefoxParticipant, firefoxSkipReason, joinFirefox, launchFirefox, testId } from '../helpers/firefox.js';
import { traceSteps } from '../helpers/steps.js';

/** Starting the world (server, relay, browsers) takes seconds on a quiet machine; on a loaded one far more than the config's minute. */
const WORLD_START_MS = 180_000;

const skip = firefoxSkipReason();
if (skip) console.warn(skip);

describe.skipIf(skip !== null)('calls with Firefox', () => {
  let world: BrowserWorld;
  /** Awaited by each test, so that a Firefox that cannot start fails every test with launchFirefox's message. */
  let firefox: Promise<Browser>;
  const contexts: BrowserContext[] = [];
  /** Uncaught errors in the Firefox pages, Content-Security-Policy violations among them. */
  const pageErrors: string[] = [];

  async function firefoxPage(): Promise<Page> {
    const { context, page } = await firefoxParticipant(await firefox);
    contexts.push(context);
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    return page;
  }

  const texts = (page: Page, id: string) => page.$$eval(testId(id), (els) => els.map((e) => e.textContent ?? ''));
  const count = (page: Page, id: string) => page.$$eval(testId(id), (els) => els.length);
  const remoteVideoWidth = (page: Page) => page.$eval(testId('remote-video'), (v) => (v as HTMLVideoElement).videoWidth);

  beforeAll(async () => {
    // Firefox starts while the server and Chromium do (each takes a couple of seconds).
    firefox = launchFirefox();
    firefox.catch(() => {}); // reported by the tests
    world = await startWorld();
  }, WORLD_START_MS);
  afterEach(async () => {
    await Promise.allSettled([...contexts.splice(0).map((c) => c.close()), world?.closeContexts()]);
    expect(pageErrors.splice(0)).toEqual([]);
  });
  afterAll(async () => {
    await firefox?.then((b) => b.close(), () => {});
    await world?.close();
  });

  it('a Chromium host and a Firefox guest see and hear each other, chat, and the guest leaves feedback', async (context) => {
    const step = traceSteps(context);
    const room = await world.createRoom({ enable_chat: true, return_url: `${world.base}/left?who=guest`, host_return_url: `${world.base}/left?who=host` });
    step('open the pages');
    const host = await world.participant();
    const guest = await firefoxPage();
    step('join');
    await Promise.all([join(host, room.host_join_url, 'Dr. Ada'), joinFirefox(guest, room.guest_join_url, 'Fox')]);

    // Each side decodes the other's video and receives its audio (getStats), or this throws.
    step('media flowing');
    await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);
    // The decoded frames reach the tiles on both sides, under the right names.
    await expect.poll(() => remoteVideoWidth(guest), { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(() => host.getByTestId('remote-video').evaluate((v: HTMLVideoElement) => v.videoWidth), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await guest.$$eval('figcaption', (els) => els.map((e) => e.textContent))).toContain('Dr. Ada');
    expect(await host.locator('figcaption').allTextContents()).toContain('Fox');
    expect((await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants).toHaveLength(2);

    // Chat both ways, as text (a narrow window shows the chat behind its button).
    step('chat');
    if (!(await guest.$(testId('chat-input')))) await clickTestId(guest, 'chat-button');
    await host.getByTestId('chat-input').fill('Hello <i>there</i>');
    await host.getByTestId('chat-send').click();
    await expect.poll(() => texts(guest, 'chat-message'), { timeout: 15_000 }).toEqual(['Dr. Ada: Hello <i>there</i>']);
    await fillTestId(guest, 'chat-input', 'Hi from Firefox');
    await clickTestId(guest, 'chat-send');
    // The host's own message shows as "You", the guest's under the name typed in Firefox.
    await expect.poll(() => host.getByTestId('chat-message').allTextContents(), { timeout: 15_000 }).toEqual(['You: Hello <i>there</i>', 'Fox: Hi from Firefox']);
    expect(await texts(guest, 'chat-message')).toEqual(['Dr. Ada: Hello <i>there</i>', 'You: Hi from Firefox']);

    // The guest leaves: the host's tile for them goes; feedback; on to the guest's return URL.
    step('the guest leaves');
    await clickTestId(guest, 'leave-button');
    await expect.poll(() => host.getByTestId('remote-video').count(), { timeout: 20_000 }).toBe(0);
    step('feedback');
    await clickTestId(guest, 'feedback-good');
    await fillTestId(guest, 'feedback-comment', 'Worked in Firefox');
    await clickTestId(guest, 'feedback-submit');
    await guest.waitForSelector(testId('feedback-thanks'));
    await expect.poll(() => guest.url(), { timeout: 20_000 }).toBe(`${world.base}/left?who=guest`);

    const feedbacks = await world.api('GET', '/api/room_feedbacks');
    expect(feedbacks.json.room_feedbacks).toEqual([expect.objectContaining({ room_token: room.token, rating: 'good', feedback: 'Worked in Firefox' })]);
  });

  it('a Firefox host and a Firefox guest see and hear each other, then leave', async (context) => {
    const step = traceSteps(context);
    const room = await world.createRoom({ return_url: `${world.base}/left?who=guest`, host_return_url: `${world.base}/left?who=host` });
    step('open the pages');
    const host = await firefoxPage();
    const guest = await firefoxPage();
    step('join');
    await Promise.all([joinFirefox(host, room.host_join_url, 'Host Fox'), joinFirefox(guest, room.guest_join_url, 'Guest Fox')]);

    // Each side decodes the other's video and receives its audio (getStats), or this throws.
    step('media flowing');
    await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);
    step('remote video on screen');
    await expect.poll(() => remoteVideoWidth(host), { timeout: 20_000 }).toBeGreaterThan(0);
    await expect.poll(() => remoteVideoWidth(guest), { timeout: 20_000 }).toBeGreaterThan(0);
    expect(await count(host, 'remote-video')).toBe(1);

    step('the guest leaves');
    await clickTestId(guest, 'leave-button');
    await expect.poll(() => count(host, 'remote-video'), { timeout: 20_000 }).toBe(0);
    await clickTestId(guest, 'feedback-skip');
    await expect.poll(() => guest.url(), { timeout: 20_000 }).toBe(`${world.base}/left?who=guest`);
    step('the host leaves');
    await clickTestId(host, 'leave-button');
    await clickTestId(host, 'feedback-skip');
    await expect.poll(() => host.url(), { timeout: 20_000 }).toBe(`${world.base}/left?who=host`);
    // Both left: the room ends (ROOM_END_GRACE_SECONDS=1 in startWorld).
    step('the room ends');
    await expect.poll(async () => (await world.api('GET', `/api/rooms/${room.token}`)).json.status, { timeout: 20_000, interval: 250 }).toBe('ended');
  });

  it('the waiting room in Firefox: a Firefox guest waits, a Firefox host lets it in, and the call works', async (context) => {
    const step = traceSteps(context);
    const room = await world.createRoom({ enable_waiting_room: true });
    step('open the pages');
    const host = await firefoxPage();
    const guest = await firefoxPage();
    step('the host joins');
    await joinFirefox(host, room.host_join_url, 'Host Fox');
    step('the guest asks to join');
    await guest.goto(room.guest_join_url);
    await fillTestId(guest, 'name-input', 'Waiting Fox');
    await clickTestId(guest, 'join-button');
    await guest.waitForSelector(testId('waiting-room'));
    expect(await count(guest, 'remote-video')).toBe(0);

    step('the host admits the guest');
    await host.waitForSelector(testId('waiting-participant'));
    expect(await texts(host, 'waiting-participant')).toEqual(['Waiting Fox']);
    await clickTestId(host, 'admit-button');
    await guest.waitForSelector(testId('waiting-room'), { hidden: true });
    step('media flowing');
    await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);
    expect(await count(host, 'waiting-participant')).toBe(0);
    expect((await world.api('GET', `/api/rooms/${room.token}`)).json).toMatchObject({ waiting_participants: [], current_participants: [expect.any(String), expect.any(String)] });
  });
});

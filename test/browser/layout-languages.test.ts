// The call in people's hands (docs/design.md, "Languages and layout"): the layout measured from bounding
// boxes on a 390x844 phone and a 1280x720 laptop, the chat panel and its
// unread badge, switching camera and microphone mid-call, and every screen in
// every language: no missing text, `lang` and `dir` set, and no serious or
// critical axe-core violation in English, German and Arabic.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { en } from '../../src/shared/i18n/en.js';
import { LANGUAGES } from '../../src/shared/i18n/languages.js';
import { axeViolations, callConnectionStates, expectMediaFlowing, inboundStats, join, startWorld, type BrowserWorld } from '../helpers/browser.js';

/** Starting the world (server, relay, browsers) takes seconds on a quiet machine; on a loaded one far more than the config's minute. */
const WORLD_START_MS = 180_000;

let world: BrowserWorld;

beforeAll(async () => {
  world = await startWorld();
}, WORLD_START_MS);
afterEach(() => world.closeContexts());
afterAll(() => world?.close());

const PHONE = { width: 390, height: 844 };
const LAPTOP = { width: 1280, height: 720 };

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
async function box(page: Page, selector: string): Promise<Box> {
  const found = await page.locator(selector).first().boundingBox();
  if (!found) throw new Error(`${selector} is not on screen`);
  return found;
}
const area = (b: Box) => b.width * b.height;
const inside = (b: Box, viewport: { width: number; height: number }) => b.x >= 0 && b.y >= 0 && b.x + b.width <= viewport.width + 0.5 && b.y + b.height <= viewport.height + 0.5;

describe.each([
  ['phone', PHONE],
  ['laptop', LAPTOP],
])('layout on a %s', (_name, viewport) => {
  it('shows the other person as the main picture and oneself as an inset; three share a grid; the control bar stays on screen', async () => {
    const room = await world.createRoom();
    const host = await world.participant({ viewport });
    await join(host, room.host_join_url, 'Dr. Ada');
    // Alone: said so, and one's own picture is an inset.
    expect(await host.getByText(en['call.alone']).isVisible()).toBe(true);
    const guest = await world.participant({ viewport });
    await join(guest, room.guest_join_url, 'Pat');
    await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);
    const screen = viewport.width * viewport.height;
    for (const page of [host, guest]) {
      const main = await box(page, '[data-testid=remote-video]');
      const self = await box(page, '[data-testid=local-video]');
      expect(area(main) / screen, 'the other person takes at least 40% of the screen').toBeGreaterThanOrEqual(0.4);
      expect(area(self) / screen, 'oneself is a small inset').toBeLessThan(0.08);
      expect(area(self)).toBeLessThan(area(main) / 4);
      for (const id of ['leave-button', 'mute-button', 'camera-button']) expect(inside(await box(page, `[data-testid=${id}]`), viewport), id).toBe(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
    }

    const third = await world.participant({ viewport });
    await join(third, room.guest_join_url, 'Sam');
    await expect.poll(() => host.getByTestId('remote-video').count(), { timeout: 20_000 }).toBe(2);
    await expectMediaFlowing(third);
    // Three people: everyone on screen in a grid, no picture over another, each a fair share.
    const pictures = [await box(host, '[data-testid=local-video]'), ...(await Promise.all([0, 1].map((i) => host.getByTestId('remote-video').nth(i).boundingBox())))] as Box[];
    for (const picture of pictures) {
      expect(inside(picture, viewport)).toBe(true);
      expect(area(picture) / screen).toBeGreaterThan(0.08);
    }
    for (let i = 0; i < pictures.length; i++) {
      for (let j = i + 1; j < pictures.length; j++) {
        const [a, b] = [pictures[i]!, pictures[j]!];
        const overlap = Math.max(0, Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x)) * Math.max(0, Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y));
        expect(overlap).toBe(0);
      }
    }
    expect(inside(await box(host, '[data-testid=leave-button]'), viewport)).toBe(true);

    // A shared screen takes the main place.
    await host.getByTestId('screenshare-button').click();
    await guest.getByTestId('remote-screen').waitFor();
    const shared = await box(guest, '[data-testid=remote-screen]');
    for (const i of [0, 1]) expect(area(shared)).toBeGreaterThan(2 * area((await guest.getByTestId('remote-video').nth(i).boundingBox())!));
    expect(area(shared) / screen).toBeGreaterThanOrEqual(0.3);
  });
});

describe('the chat panel', () => {
  it('opens over the call on a phone, counts what arrived while closed, and is open from the start on a laptop', async () => {
    const room = await world.createRoom();
    const host = await world.participant({ viewport: LAPTOP });
    const guest = await world.participant({ viewport: PHONE });
    await join(host, room.host_join_url, 'Dr. Ada');
    await join(guest, room.guest_join_url, 'Pat');
    expect(await host.getByTestId('chat-input').isVisible()).toBe(true);
    expect(await guest.getByTestId('chat-input').isVisible()).toBe(false);
    for (const text of ['Hello', 'Can you hear me?']) {
      await host.getByTestId('chat-input').fill(text);
      await host.getByTestId('chat-send').click();
    }
    await expect.poll(() => guest.getByTestId('chat-unread').textContent(), { timeout: 15_000 }).toBe('2');
    expect(await guest.getByTestId('chat-button').getAttribute('aria-label')).toBe('Chat, 2 unread messages');
    await guest.getByTestId('chat-button').click();
    await guest.getByTestId('chat-input').waitFor();
    expect(await guest.getByTestId('chat-unread').isVisible()).toBe(false);
    expect(await guest.getByTestId('chat-message').allTextContents()).toEqual(['Dr. Ada: Hello', 'Dr. Ada: Can you hear me?']);
    // Over the call: the panel covers the picture, and the control bar stays.
    const panel = await box(guest, '.side');
    expect(area(panel)).toBeGreaterThan(0.5 * area(await box(guest, '.stage')));
    expect(inside(await box(guest, '[data-testid=leave-button]'), PHONE)).toBe(true);
    await guest.getByTestId('chat-button').click();
    expect(await guest.getByTestId('chat-input').isVisible()).toBe(false);
  });
});

describe('devices during the call', () => {
  it('switches the camera and the microphone without a new connection, and the other side keeps receiving; speaker choice and full screen', async () => {
    const { host, guest } = await world.twoPersonCall({ host: 'Dr. Ada', guest: 'Pat' });
    const sentTracks = () =>
      guest.evaluate(() =>
        (window as unknown as { __pcs: RTCPeerConnection[] }).__pcs.flatMap((pc) => pc.getSenders().map((s) => `${s.track?.kind}:${s.track?.id}:${s.track?.readyState}`)),
      );
    const before = await sentTracks();
    await guest.getByTestId('devices-button').click();
    const cameras = await guest.getByTestId('camera-select').locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    const microphones = await guest.getByTestId('microphone-select').locator('option').evaluateAll((options) => options.map((o) => (o as HTMLOptionElement).value));
    expect(cameras.length).toBeGreaterThan(0);
    // Choose the last camera and microphone (with one fake device each, it is opened again: a new track all the same).
    await guest.getByTestId('camera-select').selectOption(cameras.at(-1)!);
    await guest.getByTestId('microphone-select').selectOption(microphones.at(-1)!);
    await expect.poll(async () => (await sentTracks()).filter((t) => !before.includes(t)).length, { timeout: 20_000 }).toBe(2);
    const after = await sentTracks();
    expect(after.every((t) => t.endsWith(':live'))).toBe(true);
    // Still the one connection of the call.
    expect(await callConnectionStates(guest)).toEqual(['connected']);
    // Where the browser can route sound (Chromium: setSinkId), the speaker can be chosen too.
    expect(await guest.getByTestId('speaker-select').locator('option').count()).toBeGreaterThan(0);
    // Full screen, and back.
    await guest.getByTestId('fullscreen-button').click();
    await expect.poll(() => guest.evaluate(() => document.fullscreenElement !== null), { timeout: 15_000 }).toBe(true);
    await expect.poll(() => guest.getByTestId('fullscreen-button').textContent(), { timeout: 15_000 }).toBe(en['call.exitFullscreen']);
    await guest.getByTestId('fullscreen-button').click();
    await expect.poll(() => guest.evaluate(() => document.fullscreenElement !== null), { timeout: 15_000 }).toBe(false);
    // The host still decodes new frames from the guest.
    const seen = (await inboundStats(host)).framesDecoded;
    await expect.poll(async () => (await inboundStats(host)).framesDecoded, { timeout: 20_000 }).toBeGreaterThan(seen + 20);
  });
});

describe('every language', () => {
  /** Texts of the page a person reads or hears: visible text and accessible names. */
  const readable = (page: Page) =>
    page.evaluate(() =>
      [
        document.body.innerText,
        ...[...document.querySelectorAll('[aria-label], [title], [placeholder]')].map((e) => `${e.getAttribute('aria-label') ?? ''} ${e.getAttribute('title') ?? ''} ${e.getAttribute('placeholder') ?? ''}`),
        document.title,
      ].join('\n'),
    );
  const KEYS = Object.keys(en);
  const missingKeys = (text: string) => KEYS.filter((key) => text.includes(key));

  it.each(LANGUAGES)('%s: join, waiting, the host\u2019s list, the call and feedback, with nothing untranslated', async (lang) => {
    const room = await world.createRoom({ enable_waiting_room: true, locale: lang });
    const host = await world.participant({ viewport: LAPTOP });
    const guest = await world.participant({ viewport: PHONE });
    const screens: [string, Page][] = [];
    const check = async (name: string, page: Page) => {
      expect(await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir])).toEqual([lang, lang === 'ar' ? 'rtl' : 'ltr']);
      expect(missingKeys(await readable(page)), `${lang} ${name}`).toEqual([]);
      if (['en', 'de', 'ar'].includes(lang)) expect(await axeViolations(page), `${lang} ${name}`).toEqual([]);
      screens.push([name, page]);
    };
    await host.goto(room.host_join_url);
    await host.getByTestId('name-input').fill('Dr. Ada');
    await check('join', host);
    await host.getByTestId('join-button').click();
    await host.getByTestId('leave-button').waitFor();
    await guest.goto(room.guest_join_url);
    await guest.getByTestId('name-input').fill('Pat');
    await guest.getByTestId('join-button').click();
    await guest.getByTestId('waiting-room').waitFor();
    await check('waiting', guest);
    await host.getByTestId('waiting-participant').waitFor();
    await check('host list', host);
    await host.getByTestId('admit-button').click();
    await expectMediaFlowing(guest);
    await check('call', guest);
    await check('call (host)', host);
    await guest.getByTestId('leave-button').click();
    await guest.getByTestId('feedback-good').waitFor();
    await check('feedback', guest);
    // The texts are this language's, not English (the room name and the names are the participants').
    if (lang !== 'en') expect(await guest.locator('h1').textContent()).not.toBe(en['feedback.title']);
    expect(screens).toHaveLength(6);
  });
});

// Script payloads in everything a participant sees (docs/security.md
// "The join side"): the room name, display names (preset by the room, given in
// ?name=, typed), chat and the feedback comment, in real Chromium. Nothing
// runs (a window flag stays unset, no dialog opens, no element is injected)
// and the text shows literally. After the call the browser goes to the room's
// stored return URL, never to one smuggled into the join link or the feedback.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSite, startWorld, type BrowserWorld, type Site } from '../helpers/browser.js';

let world: BrowserWorld;
let clinic: Site;
let evil: Site;

beforeAll(async () => {
  world = await startWorld();
  clinic = await startSite(() => '<!doctype html><title>Clinic</title><p>Back at the clinic</p>');
  evil = await startSite(() => '<!doctype html><title>Evil</title><script>window.__phished = 1</script>');
});
afterEach(() => world.closeContexts());
afterAll(async () => {
  await world?.close();
  await clinic?.close();
  await evil?.close();
});

// Each sets window.__xss (or opens a dialog) if it ever runs as markup or script.
const ROOM_NAME = `<img src=x onerror="window.__xss='room'"></script><script>window.__xss='room2'</script>`;
const GUEST_NAME = `"><svg onload="window.__xss='guest'"><img src=x onerror=alert(1)>`;
const HOST_NAME = `</script><iframe srcdoc="<script>parent.__xss='host'</script>">`;
const CHAT = [
  `<img src=x onerror="window.__xss='chat'">`,
  `javascript:window.__xss='chat-js'//`,
  `<a href="javascript:window.__xss='link'">click</a>`,
  `{{constructor.constructor('window.__xss="tpl"')()}}`,
  `\u202Eevil\u202C <b>bold</b> &amp; &lt;`,
].join(' ');
const COMMENT = `<script>window.__xss='feedback'</script><img src=x onerror=alert('feedback')>`;

/** Collects dialogs (alert, confirm, prompt) a page opens: there must be none. */
function watchDialogs(page: Page): string[] {
  const seen: string[] = [];
  page.on('dialog', (d) => {
    seen.push(d.message());
    void d.dismiss();
  });
  return seen;
}

/** Whether anything ran or was injected: the flag, and elements no Parley page ever renders. */
const injected = (page: Page) =>
  page.evaluate(() => ({
    flag: (window as unknown as { __xss?: string }).__xss ?? null,
    elements: document.querySelectorAll('img[src="x"], svg[onload], iframe[srcdoc], a[href^="javascript"], script:not([src]):not([type="application/json"])').length,
  }));

describe('names, chat and feedback are text', () => {
  it('shows every payload literally, runs none of them, and leaves for the stored return URLs only', { timeout: 90_000 }, async () => {
    const room = await world.createRoom({
      name: ROOM_NAME,
      guest_display_name: GUEST_NAME,
      return_url: `${clinic.origin}/after-guest`,
      host_return_url: `${clinic.origin}/after-host`,
    });
    const smuggle = ['return_url', 'returnUrl', 'redirect', 'next', 'host_return_url']
      .map((k) => `${k}=${encodeURIComponent(`${evil.origin}/${k}`)}`)
      .join('&');

    const host = await world.participant();
    const guest = await world.participant();
    const dialogs = [...[host, guest].map(watchDialogs)];

    // The host's name comes from ?name= (pre-filled), the guest's from the room's preset: neither is typed.
    await host.goto(`${room.host_join_url}?name=${encodeURIComponent(HOST_NAME)}&${smuggle}`);
    await guest.goto(`${room.guest_join_url}?${smuggle}`);
    for (const page of [host, guest]) {
      await page.getByTestId('join-button').waitFor();
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(ROOM_NAME);
      expect(await page.title()).toBe(`${ROOM_NAME} · Parley`);
    }
    expect(await host.getByTestId('name-input').inputValue()).toBe(HOST_NAME);
    expect(await guest.getByTestId('name-input').inputValue()).toBe(GUEST_NAME);
    await host.getByTestId('join-button').click();
    await guest.getByTestId('join-button').click();
    for (const page of [host, guest]) await page.getByTestId('leave-button').waitFor();

    // Each sees the other's name literally on the tile.
    await expect.poll(() => host.locator('figure.tile:not(.self) figcaption').first().textContent(), { timeout: 15_000 }).toContain(GUEST_NAME);
    await expect.poll(() => guest.locator('figure.tile:not(.self) figcaption').first().textContent(), { timeout: 15_000 }).toContain(HOST_NAME);

    // Chat both ways, typed into the real input.
    await guest.getByTestId('chat-input').fill(CHAT);
    await guest.getByTestId('chat-send').click();
    await host.getByTestId('chat-input').fill(CHAT);
    await host.getByTestId('chat-send').click();
    for (const [page, otherName] of [
      [host, GUEST_NAME],
      [guest, HOST_NAME],
    ] as const) {
      await expect.poll(() => page.getByTestId('chat-message').count(), { timeout: 15_000 }).toBe(2);
      const texts = await page.getByTestId('chat-message').allTextContents();
      expect(texts).toContain(`${otherName}: ${CHAT}`);
    }

    // The guest leaves and comments; the browser goes to the room's return URL, not the smuggled ones.
    await guest.getByTestId('leave-button').click();
    await guest.getByTestId('feedback-good').click();
    await guest.getByTestId('feedback-comment').fill(COMMENT);
    // Also into the form's request itself: an extra return URL in the posted body changes nothing.
    await guest.route('**/feedback', async (route) => {
      const body = JSON.parse(route.request().postData() ?? '{}') as Record<string, unknown>;
      await route.continue({ postData: JSON.stringify({ ...body, return_url: `${evil.origin}/posted`, redirect: `${evil.origin}/posted` }) });
    });
    for (const page of [host, guest]) expect(await injected(page)).toEqual({ flag: null, elements: 0 });
    await guest.getByTestId('feedback-submit').click();
    await guest.getByTestId('feedback-thanks').waitFor();
    await guest.waitForURL(`${clinic.origin}/after-guest`, { timeout: 20_000 });

    await host.getByTestId('leave-button').click();
    await host.getByTestId('feedback-skip').click();
    await host.waitForURL(`${clinic.origin}/after-host`, { timeout: 20_000 });

    expect(evil.hits).toEqual([]);
    expect(clinic.hits).toEqual(['/after-guest', '/after-host']);
    expect(dialogs.flat()).toEqual([]);

    // The comment arrives as it was typed, as data (JSON answers carry nosniff and a CSP that runs nothing).
    const feedbacks = (await world.api('GET', '/api/room_feedbacks?per_page=100')).json.room_feedbacks as { room_token: string; feedback?: string }[];
    expect(feedbacks.find((f) => f.room_token === room.token)?.feedback).toBe(COMMENT);
  });

  it('a room name full of markup stays text on the closed page and in the API answer opened in a browser', async () => {
    const room = await world.createRoom({ name: ROOM_NAME });
    const page = await world.participant();
    const dialogs = watchDialogs(page);
    await page.setExtraHTTPHeaders({ authorization: `Bearer ${world.apiToken}` });
    await page.goto(`${world.server.url}/api/rooms/${room.token}`);
    expect(await page.evaluate(() => document.body.innerText)).toContain(JSON.stringify(ROOM_NAME).slice(1, -1));
    expect(await injected(page)).toEqual({ flag: null, elements: 0 });
    await world.api('POST', `/api/rooms/${room.token}/close`);
    await page.goto(room.guest_join_url);
    await page.getByTestId('room-closed').waitFor();
    expect(await injected(page)).toEqual({ flag: null, elements: 0 });
    expect(dialogs).toEqual([]);
  });
});

// Embedding the call (docs/call.md "Embedding"): two integrator
// pages on two loopback ports frame the same join link in real Chromium. The
// tenant allows the first origin (admin API, frame-ancestors): there the call
// works inside the iframe, camera and microphone delegated by the iframe's
// `allow`. The second origin, and any page framing a room of a tenant that
// allows nobody, gets a blocked frame.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpJson } from '../helpers/api.js';
import { ADMIN_TOKEN } from '../helpers/app.js';
import { attr, expectMediaFlowing, join, startSite, startWorld, type BrowserWorld, type Site } from '../helpers/browser.js';

let world: BrowserWorld;
let allowed: Site;
let other: Site;

/** An integrator's page: the join link in an iframe, with or without the permissions the call needs. */
const embedding = (url: URL) =>
  `<!doctype html><title>Integrator</title><h1>Appointment</h1>` +
  `<iframe id="call" src="${attr(url.searchParams.get('src') ?? '')}" width="900" height="700"` +
  (url.pathname === '/bare' ? '' : ' allow="camera; microphone; display-capture; autoplay; fullscreen"') +
  `></iframe>`;

const admin = (method: string, path: string, body?: unknown) => httpJson(world.server.url, ADMIN_TOKEN, method, path, body);

beforeAll(async () => {
  world = await startWorld({ PARLEY_ADMIN_TOKEN: ADMIN_TOKEN });
  allowed = await startSite(embedding);
  other = await startSite(embedding);
  const tenants = (await admin('GET', '/admin/tenants')).json.tenants as { id: string; name: string }[];
  const tenant = tenants.find((t) => t.name === 'Browser tests')!;
  const set = await admin('PUT', `/admin/tenants/${tenant.id}/frame-ancestors`, { frame_ancestors: [allowed.origin] });
  expect(set).toEqual({ status: 200, json: { frame_ancestors: [allowed.origin] } });
});
afterEach(() => world.closeContexts());
afterAll(async () => {
  await world?.close();
  await allowed?.close();
  await other?.close();
});

/** The iframe's frame once it has navigated to `src`'s origin, or the error page Chromium puts in its place. */
async function callFrame(page: Page) {
  await page.locator('#call').waitFor();
  const handle = await page.locator('#call').elementHandle();
  const frame = await handle!.contentFrame();
  await frame!.waitForLoadState('domcontentloaded');
  return frame!;
}

/** Chromium's console report of a frame refused by frame-ancestors. */
function refusals(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (m) => {
    // Chromium 156: "Framing '<url>' violates the following Content Security Policy directive: "frame-ancestors …". The request has been blocked."
    if (/frame-ancestors/.test(m.text()) && /blocked|Refused/.test(m.text())) seen.push(m.text());
  });
  return seen;
}

describe('an integrator embeds the call', () => {
  it('works in an iframe on an allowed origin: camera and microphone delegated, the call connects', async () => {
    const room = await world.createRoom();
    const patient = await world.participant();
    await patient.goto(`${allowed.origin}/embed?src=${encodeURIComponent(room.guest_join_url)}`);
    const frame = await callFrame(patient);
    expect(frame.url()).toBe(room.guest_join_url);
    await frame.getByTestId('join-button').waitFor();
    expect(await frame.evaluate(() => navigator.mediaDevices.getUserMedia({ video: true, audio: true }).then((s) => s.getTracks().length, (e: Error) => e.name))).toBe(2);
    await frame.getByTestId('name-input').fill('Embedded patient');
    await frame.getByTestId('join-button').click();
    await frame.getByTestId('leave-button').waitFor();

    const doctor = await world.participant();
    await join(doctor, room.host_join_url, 'Doctor');
    // The doctor receives the embedded patient's camera and microphone: the iframe really captured them.
    const stats = await expectMediaFlowing(doctor);
    expect(stats.framesDecoded).toBeGreaterThan(0);
    await frame.getByTestId('remote-video').waitFor();
  });

  it('without the iframe\u2019s `allow`, the page loads but the browser withholds the camera (the integrator\u2019s part)', async () => {
    const room = await world.createRoom();
    const patient = await world.participant();
    await patient.goto(`${allowed.origin}/bare?src=${encodeURIComponent(room.guest_join_url)}`);
    const frame = await callFrame(patient);
    await frame.getByTestId('join-button').waitFor();
    expect(await frame.evaluate(() => navigator.mediaDevices.getUserMedia({ video: true }).then(() => 'granted', (e: Error) => e.name))).toBe('NotAllowedError');
  });

  it('is refused on an origin the tenant did not allow', async () => {
    const room = await world.createRoom();
    const stranger = await world.participant();
    const seen = refusals(stranger);
    await stranger.goto(`${other.origin}/embed?src=${encodeURIComponent(room.guest_join_url)}`);
    const frame = await callFrame(stranger);
    await expect.poll(() => seen.length, { timeout: 15_000 }).toBeGreaterThan(0);
    expect(seen[0]).toContain(`frame-ancestors ${allowed.origin}`);
    expect(frame.url()).not.toBe(room.guest_join_url);
    expect(await frame.locator('[data-testid=join-button]').count()).toBe(0);
    // The same link opened directly still works: only the framing is refused.
    await stranger.goto(room.guest_join_url);
    await stranger.getByTestId('join-button').waitFor();
  });

  it("is refused everywhere for a tenant that allows nobody (the default, 'none')", async () => {
    const tenant = await world.server.services.tenants.createTenant({ name: 'Not embedding' });
    const { token } = await world.server.services.tenants.issueToken(tenant.id, {});
    const res = await fetch(`${world.server.url}/api/rooms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Elsewhere', meeting_duration: 30, scheduled_at: new Date().toISOString() }),
    });
    const room = (await res.json()) as { guest_join_url: string };
    const page = await world.participant();
    const seen = refusals(page);
    await page.goto(`${allowed.origin}/embed?src=${encodeURIComponent(room.guest_join_url)}`);
    const frame = await callFrame(page);
    await expect.poll(() => seen.length, { timeout: 15_000 }).toBeGreaterThan(0);
    expect(seen[0]).toContain("frame-ancestors 'none'");
    expect(await frame.locator('[data-testid=join-button]').count()).toBe(0);
  });
});

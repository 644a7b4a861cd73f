// `npm run screenshots`: every screen of the participant pages at 390x844 (a
// phone) and 1280x720 (a laptop), in English and Arabic, into
// docs/screenshots/ (docs/call.md shows them). A real server on the embedded
// database and real headless Chromium with fake camera and microphone, as in
// the browser tests; everything it starts it stops.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expectMediaFlowing, startWorld } from '../test/helpers/browser.js';

const OUT = path.resolve('docs/screenshots');
const SIZES = { phone: { width: 390, height: 844 }, laptop: { width: 1280, height: 720 } };
const LANGS = ['en', 'ar'] as const;

const settle = (ms = 1200) => new Promise((resolve) => setTimeout(resolve, ms));

async function enter(page: Page, url: string, name: string) {
  await page.goto(url);
  await page.getByTestId('name-input').fill(name);
  await page.getByTestId('join-button').click();
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const world = await startWorld();
  try {
    for (const lang of LANGS) {
      for (const [size, viewport] of Object.entries(SIZES)) {
        const shot = async (page: Page, screen: string) => {
          await settle();
          const file = path.join(OUT, `${screen}-${lang}-${size}.png`);
          await page.screenshot({ path: file });
          console.log(path.relative('.', file));
        };
        const room = await world.createRoom({ name: lang === 'ar' ? 'استشارة — د. آدا' : 'Consultation — Dr. Ada', enable_waiting_room: true, locale: lang });
        const host = await world.participant({ viewport });
        const guest = await world.participant({ viewport });
        const third = await world.participant({ viewport });

        await guest.goto(room.guest_join_url);
        await guest.getByTestId('name-input').fill(lang === 'ar' ? 'سارة' : 'Pat Patient');
        // The join screen with the check's verdict in.
        await guest.locator('[data-testid=network-verdict]:not([data-verdict=checking])').waitFor();
        await shot(guest, 'join');
        await guest.getByTestId('join-button').click();
        await guest.getByTestId('waiting-room').waitFor();
        await shot(guest, 'waiting');

        await enter(host, room.host_join_url, lang === 'ar' ? 'د. آدا' : 'Dr. Ada');
        await host.getByTestId('waiting-participant').waitFor();
        await shot(host, 'host-waiting-list');
        await host.getByTestId('admit-button').click();
        await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);
        await shot(guest, 'call-two');

        await enter(third, room.guest_join_url, lang === 'ar' ? 'يوسف' : 'Sam');
        await host.getByTestId('waiting-participant').waitFor();
        await host.getByTestId('admit-button').click();
        await expectMediaFlowing(third);
        await host.getByTestId('screenshare-button').click();
        await guest.getByTestId('remote-screen').waitFor();
        await shot(guest, 'call-three-screen');

        if (!(await host.getByTestId('chat-input').isVisible())) await host.getByTestId('chat-button').click();
        await host.getByTestId('chat-input').fill(lang === 'ar' ? 'مرحبًا، هل تسمعينني؟' : 'Hello, can you hear me?');
        await host.getByTestId('chat-send').click();
        if (!(await guest.getByTestId('chat-input').isVisible())) await guest.getByTestId('chat-button').click();
        await guest.getByTestId('chat-message').waitFor();
        await shot(guest, 'chat');
        await guest.getByTestId('chat-button').click();

        // The guest's connection to the server goes and does not come back for a while.
        const target = world.relay.target;
        world.relay.target = 1;
        world.relay.cut();
        await guest.getByTestId('reconnecting').waitFor();
        await shot(guest, 'reconnecting');
        world.relay.target = target;
        await guest.getByTestId('reconnecting').waitFor({ state: 'hidden', timeout: 15_000 });

        await guest.getByTestId('leave-button').click();
        await guest.getByTestId('feedback-good').waitFor();
        await shot(guest, 'feedback');
        await world.closeContexts();
      }
    }
  } finally {
    await world.close();
  }
}

await main();

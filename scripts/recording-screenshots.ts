// `npm run screenshots:recording`: the screens of recording with consent
// (docs/design.md, "Recording with consent") at 390x844 (a phone) and
// 1280x800 (a laptop), in English and Arabic, into docs/screenshots/: the
// question a guest is asked (recording-consent), the host's page while it
// records (the indicator and the record button, pressed), and the host told
// who did not agree (recording-declined). A real server with a Janus of its
// own, real headless Chromium with fake camera and microphone, as in
// test/browser/recording.test.ts; everything it starts it stops.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expectMediaFlowing, join } from '../test/helpers/browser.js';
import { startRecordingWorld } from '../test/helpers/recording-world.js';

const OUT = path.resolve('docs/screenshots');
const SIZES = { phone: { width: 390, height: 844 }, laptop: { width: 1280, height: 800 } };
const LANGS = ['en', 'ar'] as const;

const settle = (ms = 1200) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const recording = await startRecordingWorld();
  const { world } = recording;
  try {
    for (const lang of LANGS) {
      for (const [size, viewport] of Object.entries(SIZES)) {
        const shot = async (page: Page, screen: string) => {
          await settle();
          const file = path.join(OUT, `${screen}-${lang}-${size}.png`);
          await page.screenshot({ path: file });
          console.log(path.relative('.', file));
        };
        const names = lang === 'ar' ? { room: 'استشارة — د. آدا', host: 'د. آدا', guest: 'سارة' } : { room: 'Consultation — Dr. Ada', host: 'Dr. Ada', guest: 'Pat Patient' };
        const room = await world.createRoom({ name: names.room, locale: lang, enable_recording: true });
        const host = await world.participant({ viewport });
        const guest = await world.participant({ viewport });
        await join(host, room.host_join_url, names.host);
        await join(guest, room.guest_join_url, names.guest);
        await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);

        await host.getByTestId('record-button').click();
        await guest.getByTestId('recording-consent').waitFor();
        await shot(guest, 'recording-consent');
        await guest.getByTestId('consent-decline').click();
        await host.getByTestId('recording-declined').waitFor();
        await shot(host, 'recording-declined');

        await host.getByTestId('record-button').click();
        await guest.getByTestId('consent-accept').click();
        await host.getByTestId('recording-indicator').waitFor();
        await guest.getByTestId('recording-indicator').waitFor();
        await Promise.all([expectMediaFlowing(host), expectMediaFlowing(guest)]);
        await shot(host, 'recording-host');
        await shot(guest, 'recording-guest');
        await host.getByTestId('record-button').click();
        await world.closeContexts();
      }
    }
  } finally {
    await recording.close();
  }
}

await main();

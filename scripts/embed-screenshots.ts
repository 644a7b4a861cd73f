// `npm run screenshots:embed`: the demo integrator page (docs/embed-demo.html)
// with a patient in a call inside <parley-room>, at 390x844 (a phone) and
// 1280x720 (a laptop), in English and Arabic, and with `minimal`, into
// docs/screenshots/embed-*.png (docs/embedding.md shows them). The page on
// `localhost`, Parley on 127.0.0.1, as in the browser tests; a real server on
// the embedded database and headless Chromium with fake camera and microphone.
import fs from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { expectMediaFlowing, keepPeerConnections, startSite, startWorld } from '../test/helpers/browser.js';
import { demoPage, demoUrl } from '../test/helpers/embed.js';

const OUT = path.resolve('docs/screenshots');
const SIZES = { phone: { width: 390, height: 844 }, laptop: { width: 1280, height: 720 } };
const PEOPLE = { en: { room: 'Consultation — Dr. Ada', patient: 'Pat Patient', doctor: 'Dr. Ada' }, ar: { room: 'استشارة — د. آدا', patient: 'سارة', doctor: 'د. آدا' } };

const settle = (ms = 1500) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const world = await startWorld();
  const site = await startSite(() => demoPage(), { host: 'localhost' });
  try {
    const tenant = (await world.server.services.tenants.listTenants()).find((t) => t.name === 'Browser tests')!;
    await world.server.services.tenants.setFrameAncestors(tenant.id, [site.origin]);
    const shots: { lang: 'en' | 'ar'; size: keyof typeof SIZES; minimal: boolean }[] = [
      ...(['en', 'ar'] as const).flatMap((lang) => (['laptop', 'phone'] as const).map((size) => ({ lang, size, minimal: false }))),
      { lang: 'en', size: 'laptop', minimal: true },
    ];
    for (const { lang, size, minimal } of shots) {
      const people = PEOPLE[lang];
      const room = await world.createRoom({ name: people.room, locale: lang, enable_chat: true });
      const context = await world.browser.newContext({ viewport: SIZES[size], ...(size === 'phone' ? { isMobile: true, hasTouch: true } : {}) });
      await context.addInitScript(keepPeerConnections);
      const page: Page = await context.newPage();
      await page.goto(demoUrl(site.origin, room.guest_join_url, { name: people.patient, lang, minimal }));
      await page.waitForFunction(() => (window as unknown as { demoEvents: { event: string }[] }).demoEvents.some((e) => e.event === 'ready'));
      const frame = (await (await page.locator('parley-room iframe').elementHandle())!.contentFrame())!;
      await frame.getByTestId('join-button').click();
      const doctor = await world.participant();
      await doctor.goto(room.host_join_url);
      await doctor.getByTestId('name-input').fill(people.doctor);
      await doctor.getByTestId('join-button').click();
      await expectMediaFlowing(frame as never);
      // A command from the integrator's page, so that the log shows one.
      await page.locator('parley-room').evaluate((e: HTMLElement & { toggleMicrophone(on?: boolean): void }) => e.toggleMicrophone(false));
      await settle();
      const file = path.join(OUT, `embed-${minimal ? 'minimal' : 'demo'}-${lang}-${size}.png`);
      await page.screenshot({ path: file, fullPage: size === 'phone' });
      console.log(path.relative('.', file));
      await context.close();
      await world.closeContexts();
    }
  } finally {
    await site.close();
    await world.close();
  }
}

await main();

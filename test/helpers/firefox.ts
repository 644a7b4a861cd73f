// A second engine for the browser tests: Debian's firefox-esr driven by
// puppeteer-core over WebDriver BiDi (test/README.md, "A second engine:
// Firefox"). Fake camera and microphone and loopback ICE come from prefs, not
// command-line flags. One Firefox serves every participant: each gets its own
// browser context (BiDi user context) and its own window, so no participant's
// page is a hidden background tab (Firefox throttles those).
import fs from 'node:fs';
import puppeteer, { type Browser, type BrowserContext, type Page } from 'puppeteer-core';
import { keepPeerConnections } from './browser.js';

export const FIREFOX_PATH = '/usr/bin/firefox-esr';

export const FIREFOX_PREFS: Record<string, unknown> = {
  // A fake camera and microphone, granted without a prompt.
  'media.navigator.streams.fake': true,
  'media.navigator.permission.disabled': true,
  // The only network here is loopback: without this ICE gathers no candidate.
  'media.peerconnection.ice.loopback': true,
  // Host candidates as addresses, not mDNS names nothing here resolves.
  'media.peerconnection.ice.obfuscate_host_addresses': false,
  // Remote audio and video play without a user gesture.
  'media.autoplay.default': 0,
  // Firefox holds enumerateDevices() until the document has focus (as the spec
  // says), and of several windows in one browser only one has it: the join
  // screen of every other participant would wait for its device list forever.
  // Each real participant has their own, focused, browser.
  'media.devices.unfocused.enabled': true,
};

const inCI = process.env.CI === 'true' || process.env.CI === '1';

/**
 * Why the Firefox tests cannot run here, or null if they should run. In CI a
 * missing Firefox is a failure (launchFirefox says so), never a skip: a green
 * run must mean the second engine was tested.
 */
export function firefoxSkipReason(): string | null {
  if (inCI || fs.existsSync(FIREFOX_PATH)) return null;
  return `Firefox tests skipped: ${FIREFOX_PATH} not found (apt-get install firefox-esr); in CI this is a failure`;
}

export interface FirefoxLaunchOptions {
  /** Something that execs FIREFOX_PATH, e.g. a network namespace's wrapperFor(FIREFOX_PATH). */
  executablePath?: string;
  /** The remote-debugging (BiDi WebSocket) port on 127.0.0.1; by default one Firefox picks. */
  debuggingPort?: number;
  /** Prefs on top of FIREFOX_PREFS. */
  prefs?: Record<string, unknown>;
}

export async function launchFirefox(options: FirefoxLaunchOptions = {}): Promise<Browser> {
  if (!fs.existsSync(FIREFOX_PATH)) {
    throw new Error(`${FIREFOX_PATH} not found: install Debian's firefox-esr (apt-get install firefox-esr; .ci/run does it)`);
  }
  const executablePath = options.executablePath ?? FIREFOX_PATH;
  try {
    return await puppeteer.launch({
      browser: 'firefox',
      executablePath,
      headless: true,
      timeout: 30_000,
      extraPrefsFirefox: { ...FIREFOX_PREFS, ...options.prefs },
      ...(options.debuggingPort ? { debuggingPort: options.debuggingPort } : {}),
    });
  } catch (error) {
    throw new Error(`could not start ${executablePath} through puppeteer-core (WebDriver BiDi): ${(error as Error).message}`, { cause: error });
  }
}

/**
 * A page for one participant in its own context and window, keeping every
 * RTCPeerConnection it makes in window.__pcs (as participantContext does for
 * Chromium) so that a test can read getStats().
 */
export async function firefoxParticipant(browser: Browser): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.createBrowserContext();
  // The window's own size: page.setViewport needs a BiDi command (emulation.setScreenOrientationOverride) Firefox 140 lacks.
  const page = await context.newPage({ type: 'window' });
  await page.evaluateOnNewDocument(keepPeerConnections);
  return { context, page };
}

export const testId = (id: string) => `[data-testid="${id}"]`;

// Clicks and typing go through page.waitForSelector and element handles, not
// puppeteer's Locator: its wait-for-enabled step is a waitForFunction that
// builds the function with `new Function` inside the page, which the page's
// Content-Security-Policy (script-src 'self', rightly) blocks in Firefox.

/** Clicks the visible element with this data-testid (a real pointer click, over BiDi input actions). */
export async function clickTestId(page: Page, id: string): Promise<void> {
  const element = await page.waitForSelector(testId(id), { visible: true });
  await element!.click();
}

/** Replaces the text of the visible input or textarea with this data-testid by typing it. */
export async function fillTestId(page: Page, id: string, value: string): Promise<void> {
  const element = await page.waitForSelector(testId(id), { visible: true });
  await element!.evaluate((e) => {
    (e as HTMLInputElement).value = '';
  });
  await element!.type(value);
}

export async function joinFirefox(page: Page, url: string, name?: string): Promise<void> {
  await page.goto(url);
  if (name !== undefined) await fillTestId(page, 'name-input', name);
  await clickTestId(page, 'join-button');
  await page.waitForSelector(testId('leave-button'));
}

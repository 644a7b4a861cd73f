// What the embedding tests share (docs/embedding.md): the demo integrator page
// (docs/embed-demo.html) as a stand-in site serves it, init scripts that keep
// every message a window receives and every error a frame throws, near misses
// of the commands for the fuzzing, and the check that no secret left the page.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import type { ParleyCommandMessage } from '../../src/client/embed.js';
import { nastyJson, nastyString } from './arbitraries.js';

/** docs/embed-demo.html, read once: what `startSite` serves for every path. */
export const demoPage = (): string => fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/embed-demo.html'), 'utf8');

/** The demo page opened on a join link, with the element's attributes as query parameters. */
export function demoUrl(siteOrigin: string, joinUrl: string, attributes: { name?: string; lang?: string; minimal?: boolean } = {}): string {
  const url = new URL('/', siteOrigin);
  url.searchParams.set('url', joinUrl);
  if (attributes.name) url.searchParams.set('name', attributes.name);
  if (attributes.lang) url.searchParams.set('lang', attributes.lang);
  if (attributes.minimal) url.searchParams.set('minimal', '');
  return url.href;
}

/**
 * An init script for every frame: keeps the data of every message the window
 * receives (`__messages`, as JSON where it can be) and every uncaught error
 * and unhandled rejection (`__errors`). Chromium's contexts and Firefox's pages run it alike.
 */
export function recordMessagesAndErrors(): void {
  const w = window as unknown as { __messages: string[]; __errors: string[] };
  w.__messages = [];
  w.__errors = [];
  window.addEventListener('message', (event) => {
    let text: string;
    try {
      text = JSON.stringify(event.data) ?? String(event.data);
    } catch {
      text = String(event.data);
    }
    w.__messages.push(`${event.origin} ${text}`);
  });
  window.addEventListener('error', (event) => w.__errors.push(String(event.message)));
  window.addEventListener('unhandledrejection', (event) => w.__errors.push(`unhandled rejection: ${String(event.reason)}`));
}

const VALID: ParleyCommandMessage[] = [
  { parley: 1, command: 'toggle_microphone', detail: { enabled: false } },
  { parley: 1, command: 'toggle_camera', detail: {} },
  { parley: 1, command: 'toggle_chat', detail: {} },
  { parley: 1, command: 'leave', detail: {} },
  { parley: 1, command: 'admit', detail: { display_name: 'Pat' } },
  { parley: 1, command: 'deny', detail: {} },
];

/**
 * A documented command with one thing wrong (the version, the name, a key too
 * many, the detail's shape or an argument's type or length), or anything at
 * all: none of them is a command. JSON values, to cross into a browser (an own
 * `__proto__` key would not: the browser side sets it as the prototype, and
 * postMessage then carries a valid command; the tests make that one in the page).
 */
export const malformedMessage: fc.Arbitrary<unknown> = fc.oneof(
  nastyJson,
  fc.tuple(fc.constantFrom(...VALID), fc.nat(7), fc.oneof(nastyJson, nastyString)).map(([valid, how, value]) => {
    const detail = { ...valid.detail } as Record<string, unknown>;
    switch (how) {
      case 0: return { ...valid, parley: value === 1 ? '1' : value };
      case 1: return { ...valid, command: `${typeof value === 'string' ? value : typeof value}_${valid.command}` };
      case 2: return { ...valid, extra: value };
      case 3: return { ...valid, detail: { ...detail, extra: value } };
      case 4: return { ...valid, detail: value !== null && typeof value === 'object' && !Array.isArray(value) ? [value] : value };
      case 5: return { ...valid, command: 'toggle_microphone', detail: { enabled: typeof value === 'boolean' ? Number(value) : value } };
      case 6: return { ...valid, command: 'admit', detail: { display_name: typeof value === 'string' && value.length > 0 && value.length <= 100 ? value.repeat(101) : value } };
      default: return JSON.stringify(valid);
    }
  }),
);

/**
 * The secrets in `text`: each one whole, or any 16 characters in a row of it
 * (a token cut up or inside a URL is still a leak).
 */
export function leakedSecrets(text: string, secrets: string[]): string[] {
  return secrets.filter((secret) => {
    if (text.includes(secret)) return true;
    for (let i = 0; i + 16 <= secret.length; i++) if (text.includes(secret.slice(i, i + 16))) return true;
    return false;
  });
}

// The join page's side of embedding (docs/embedding.md; docs/design.md,
// "Embedding"): events to the window that frames the page, commands from it,
// over postMessage. Safe by default:
// - It talks only to the exact origins the server put in the page's data
//   (the room's frame-ancestors list, its CSP): never "*". With an empty list,
//   or a page that is not framed, it posts nothing and listens to nothing.
// - It posts to the parent's own origin where the browser names it
//   (location.ancestorOrigins: Chromium, Safari, Firefox 153 here), or once
//   the parent has spoken from a listed origin; until then, in a browser
//   without it, to each listed origin, which the browser delivers only to a
//   parent of exactly that origin (and the CSP already let only a listed
//   origin frame the page).
// - It takes a command only from the parent window, from a listed origin, in
//   the documented shape (src/shared/embed-protocol.ts), and at a bounded
//   rate; anything else is dropped without a word, and a command that fails
//   is never an error in the call.
import type { ParleyCommandMessage, ParleyEventDetails, ParleyEventName } from '../../src/client/embed.js';
import { parseEmbedCommand, PROTOCOL_VERSION } from '../../src/shared/embed-protocol.js';

export interface EmbedBridge {
  /** Whether a parent on a listed origin can hear this page. */
  readonly active: boolean;
  /** Tells the parent; nothing when the bridge is not active. */
  emit<K extends ParleyEventName>(event: K, detail: ParleyEventDetails[K]): void;
  /** Who carries out commands from now on (the page sets it once it can act on them). */
  onCommand(handler: (command: ParleyCommandMessage) => void): void;
}

/** Commands beyond this burst, refilled at COMMANDS_PER_SECOND, are dropped: a parent's runaway loop must not flood the call's own connection. */
const COMMAND_BURST = 20;
const COMMANDS_PER_SECOND = 10;

export function startEmbedBridge(origins: readonly string[], scope: Window = window): EmbedBridge {
  const parent = scope.parent;
  const framed = parent !== null && parent !== scope;
  const ancestors = scope.location.ancestorOrigins;
  // A browser that names the parent's origin: that one, if it is listed; no other.
  let targets: readonly string[] = !framed ? [] : ancestors && ancestors.length > 0 ? origins.filter((o) => o === ancestors[0]) : origins;
  const inert: EmbedBridge = { active: false, emit: () => {}, onCommand: () => {} };
  if (targets.length === 0) return inert;

  let handler: (command: ParleyCommandMessage) => void = () => {};
  let tokens = COMMAND_BURST;
  let refilledAt = Date.now();

  scope.addEventListener('message', (event: MessageEvent) => {
    if (event.source !== parent || !targets.includes(event.origin)) return;
    const command = parseEmbedCommand(event.data);
    if (!command) return;
    // The parent spoke from this origin: from now on, events go there alone.
    targets = [event.origin];
    const now = Date.now();
    tokens = Math.min(COMMAND_BURST, tokens + ((now - refilledAt) / 1000) * COMMANDS_PER_SECOND);
    refilledAt = now;
    if (tokens < 1) return;
    tokens--;
    try {
      handler(command);
    } catch {
      // A command the page could not carry out changes nothing else.
    }
  });

  return {
    active: true,
    emit(event, detail) {
      const message = { parley: PROTOCOL_VERSION, event, detail };
      for (const origin of targets) parent.postMessage(message, origin);
    },
    onCommand(next) {
      handler = next;
    },
  };
}

// `<parley-room url="JOIN_URL">`: the call inside an integrator's own page
// (docs/embedding.md). Built alone into web/dist/embed/embed.js
// (web/vite.embed.config.ts) and served as {PUBLIC_URL}/embed.js
// (src/http/routes/embed.routes.ts): one small ES module with no imports at
// run time, for pages that are not ours. It makes the iframe with the
// permissions a call needs, turns the join page's messages into DOM events,
// and its methods into commands. Only messages from its own iframe's window,
// from the join URL's exact origin, in the documented shape, become events;
// commands go to that origin only (never "*").
import type { ParleyCommandDetails, ParleyCommandMessage, ParleyCommandName, ParleyRoomElement } from '../../../src/client/embed.js';
import { parseEmbedEvent, PROTOCOL_VERSION } from '../../../src/shared/embed-protocol.js';

/** This file's version (docs/embedding.md, "Versions"); the messages carry the protocol's (`parley: 1`). */
export const version = '1.0.0';

/** What the call asks of the browser (docs/design.md, "Embedding"); a cross-origin iframe gets none of it unless its parent delegates it. */
const ALLOW = 'camera; microphone; display-capture; fullscreen; autoplay';

const STYLE =
  ':host{display:block;min-height:240px}:host([hidden]){display:none}' +
  'iframe{display:block;box-sizing:border-box;width:100%;height:100%;min-height:inherit;border:0}';

export class ParleyRoom extends HTMLElement implements ParleyRoomElement {
  static observedAttributes = ['url', 'name', 'lang', 'minimal'];

  #shadow: ShadowRoot;
  #frame: HTMLIFrameElement | null = null;
  /** The join URL's origin: the only one whose messages count and the only target of commands. */
  #origin = '';
  /** The join page said `ready`: it listens. Commands given before wait for it. */
  #ready = false;
  #queue: ParleyCommandMessage[] = [];

  constructor() {
    super();
    this.#shadow = this.attachShadow({ mode: 'open' });
    const style = document.createElement('style');
    style.textContent = STYLE;
    this.#shadow.append(style);
  }

  get url(): string {
    return this.getAttribute('url') ?? '';
  }
  set url(value: string) {
    this.setAttribute('url', value);
  }
  get name(): string {
    return this.getAttribute('name') ?? '';
  }
  set name(value: string) {
    this.setAttribute('name', value);
  }
  get minimal(): boolean {
    return this.hasAttribute('minimal');
  }
  set minimal(on: boolean) {
    this.toggleAttribute('minimal', on);
  }
  get iframe(): HTMLIFrameElement | null {
    return this.#frame;
  }

  connectedCallback() {
    window.addEventListener('message', this.#onMessage);
    this.#load();
  }

  disconnectedCallback() {
    window.removeEventListener('message', this.#onMessage);
    this.#unload();
  }

  attributeChangedCallback(_name: string, before: string | null, after: string | null) {
    if (before !== after && this.isConnected) this.#load();
  }

  toggleMicrophone(enabled?: boolean) {
    this.#send('toggle_microphone', enabled === undefined ? {} : { enabled });
  }
  toggleCamera(enabled?: boolean) {
    this.#send('toggle_camera', enabled === undefined ? {} : { enabled });
  }
  toggleChat() {
    this.#send('toggle_chat', {});
  }
  leave() {
    this.#send('leave', {});
  }
  admit(displayName?: string) {
    this.#send('admit', displayName === undefined ? {} : { display_name: displayName });
  }
  deny(displayName?: string) {
    this.#send('deny', displayName === undefined ? {} : { display_name: displayName });
  }

  #unload() {
    this.#frame?.remove();
    this.#frame = null;
    this.#ready = false;
    this.#queue = [];
  }

  /** A new iframe for the attributes as they are now (a call in progress in the old one ends with it). */
  #load() {
    this.#unload();
    let src: URL;
    try {
      src = new URL(this.url, location.href);
    } catch {
      return;
    }
    if (src.protocol !== 'https:' && src.protocol !== 'http:') return;
    if (this.name) src.searchParams.set('name', this.name);
    if (this.lang) src.searchParams.set('lang', this.lang);
    if (this.minimal) src.searchParams.set('minimal', '1');
    const frame = document.createElement('iframe');
    frame.allow = ALLOW;
    // The frame's accessible name: the element's own title, in the integrator's language; else the product's name, which needs no translation.
    frame.title = this.title || 'Parley';
    frame.src = src.href;
    this.#origin = src.origin;
    this.#frame = frame;
    this.#shadow.append(frame);
  }

  #onMessage = (event: MessageEvent) => {
    if (!this.#frame || event.source !== this.#frame.contentWindow || event.origin !== this.#origin) return;
    const message = parseEmbedEvent(event.data);
    if (!message) return;
    if (message.event === 'ready') {
      this.#ready = true;
      for (const queued of this.#queue.splice(0)) this.#post(queued);
    }
    this.dispatchEvent(new CustomEvent(message.event, { detail: message.detail }));
  };

  #send<K extends ParleyCommandName>(command: K, detail: ParleyCommandDetails[K]) {
    const message = { parley: PROTOCOL_VERSION, command, detail } as ParleyCommandMessage;
    if (this.#ready) this.#post(message);
    else this.#queue.push(message);
  }

  #post(message: ParleyCommandMessage) {
    this.#frame?.contentWindow?.postMessage(message, this.#origin);
  }
}

if (!customElements.get('parley-room')) customElements.define('parley-room', ParleyRoom);

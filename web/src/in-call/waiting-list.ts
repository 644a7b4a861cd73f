// The host's list of people waiting to be let in (docs/design.md, "Waiting room"): one entry per
// person, with Admit and Deny. Someone new waiting is announced three ways,
// since a doctor between appointments may be looking at another window: a
// chime, the page title, and the status line screen readers read out.
import type { PeerInfo } from '../../../src/shared/protocol.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';

export interface WaitingListOptions {
  /** Asks the server; resolves to an error message, or null when done. */
  decide(peerId: string, decision: 'admit' | 'deny'): Promise<string | null>;
  say(message: string): void;
  /** Plays the short sound that someone is waiting. */
  chime(): void;
}

export interface WaitingList {
  /** Shown above the call while someone waits; hidden otherwise. */
  panel: HTMLElement;
  /** The whole list, as the server gave it on (re)joining. */
  set(peers: PeerInfo[]): void;
  add(peer: PeerInfo): void;
  remove(peerId: string): void;
  stop(): void;
}

export function createWaitingList(options: WaitingListOptions): WaitingList {
  const entries = new Map<string, HTMLElement>();
  const list = h('ul', { class: 'waiting-entries' });
  const heading = h('h2', { id: 'waiting-heading' });
  const panel = h('section', { class: 'waiting-list', 'aria-labelledby': 'waiting-heading', hidden: true }, heading, list);
  const baseTitle = document.title;

  function update() {
    const count = entries.size;
    panel.hidden = count === 0;
    heading.textContent = t('waiting.count', { count: count });
    // Seen from another tab or window: the title says it too.
    document.title = count ? `(${count}) ${t('waiting.title')} · ${baseTitle}` : baseTitle;
  }

  function entry(peer: PeerInfo): HTMLElement {
    // The name is the entry's only text: the buttons' labels are drawn by CSS from data-label,
    // and their accessible names say whom they act on.
    const admit = h('button', { type: 'button', class: 'primary', 'data-testid': 'admit-button', 'data-label': t('waiting.admit'), 'aria-label': t('waiting.admitName', { name: peer.name }) });
    const deny = h('button', { type: 'button', 'data-testid': 'deny-button', 'data-label': t('waiting.deny'), 'aria-label': t('waiting.denyName', { name: peer.name }) });
    const item = h('li', { 'data-testid': 'waiting-participant', 'data-peer': peer.id }, h('span', { class: 'waiting-name' }, peer.name), admit, deny);
    const act = async (decision: 'admit' | 'deny') => {
      admit.disabled = deny.disabled = true;
      const problem = await options.decide(peer.id, decision);
      if (problem) {
        options.say(problem);
        admit.disabled = deny.disabled = false;
        return;
      }
      remove(peer.id);
      options.say(decision === 'admit' ? t('waiting.admitted', { name: peer.name }) : t('waiting.denied', { name: peer.name }));
    };
    admit.addEventListener('click', () => void act('admit'));
    deny.addEventListener('click', () => void act('deny'));
    return item;
  }

  function add(peer: PeerInfo, announce = true) {
    const known = entries.has(peer.id);
    if (known) return;
    const item = entry(peer);
    entries.set(peer.id, item);
    list.append(item);
    update();
    if (announce) {
      options.chime();
      options.say(t('waiting.someone', { name: peer.name }));
    }
  }

  function remove(peerId: string) {
    entries.get(peerId)?.remove();
    if (entries.delete(peerId)) update();
  }

  return {
    panel,
    set: (peers) => {
      const ids = new Set(peers.map((p) => p.id));
      for (const id of [...entries.keys()]) if (!ids.has(id)) remove(id);
      const fresh = peers.filter((p) => !entries.has(p.id));
      for (const peer of fresh) add(peer, false);
      // People who waited before the host arrived: one chime and one announcement for all of them.
      if (fresh.length) {
        options.chime();
        options.say(fresh.length === 1 ? t('waiting.someone', { name: fresh[0]!.name }) : t('waiting.count', { count: entries.size }));
      }
    },
    add: (peer) => add(peer),
    remove,
    stop: () => {
      document.title = baseTitle;
    },
  };
}

// The host's list of people waiting to be let in (docs/design.md, "Waiting room"): one entry per
// person, with Admit and Deny, as the call state's list of who knocks says.
// Someone new waiting is announced three ways, since a doctor between
// appointments may be looking at another window: a chime, the page title,
// and the status line screen readers read out.
import type { PeerInfo } from '../../../src/shared/protocol.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import type { CallState } from './call-state.js';

export interface WaitingListOptions {
  state: Pick<CallState, 'subscribe' | 'knockEnded'>;
  /** Asks the server; resolves to an error message, or null when done. */
  decide(peerId: string, decision: 'admit' | 'deny'): Promise<string | null>;
  say(message: string): void;
  /** Plays the short sound that someone is waiting. */
  chime(): void;
}

export interface WaitingList {
  /** Shown above the call while someone waits; hidden otherwise. */
  panel: HTMLElement;
  /** Admit or Deny for this person, as if the button was pressed (the framing page's commands: embed-events.ts). */
  decide(peerId: string, decision: 'admit' | 'deny'): void;
  stop(): void;
}

export function createWaitingList(options: WaitingListOptions): WaitingList {
  const entries = new Map<string, HTMLElement>();
  /** Each entry's decision, for decide(). */
  const decisions = new Map<string, (decision: 'admit' | 'deny') => Promise<void>>();
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
      options.state.knockEnded(peer.id);
      options.say(decision === 'admit' ? t('waiting.admitted', { name: peer.name }) : t('waiting.denied', { name: peer.name }));
    };
    admit.addEventListener('click', () => void act('admit'));
    deny.addEventListener('click', () => void act('deny'));
    // Once: a second command while the first is on its way is the buttons' disabled click.
    decisions.set(peer.id, (decision) => (admit.disabled ? Promise.resolve() : act(decision)));
    return item;
  }

  /** People who waited before the host arrived come together: one chime and one announcement for all of them. */
  function add(fresh: PeerInfo[]) {
    for (const peer of fresh) {
      const item = entry(peer);
      entries.set(peer.id, item);
      list.append(item);
    }
    update();
    options.chime();
    options.say(fresh.length === 1 ? t('waiting.someone', { name: fresh[0]!.name }) : t('waiting.count', { count: entries.size }));
  }

  function remove(peerId: string) {
    entries.get(peerId)?.remove();
    decisions.delete(peerId);
    if (entries.delete(peerId)) update();
  }

  const unsubscribe = options.state.subscribe((change) => {
    if (change.type === 'knock') add(change.peers);
    if (change.type === 'knock-ended') remove(change.peer.id);
  });

  return {
    panel,
    decide: (peerId, decision) => void decisions.get(peerId)?.(decision),
    stop: () => {
      unsubscribe();
      document.title = baseTitle;
    },
  };
}

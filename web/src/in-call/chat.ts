// The chat panel: the messages as text (never markup) and the form to send.
// A message of one's own shows at once, dimmed while it is on its way, and
// counts as sent only once the server acknowledged it (the server acknowledges
// only what went out to every node, docs/signaling.md). One the server could
// not send stays in the list marked "Not sent" with a Retry button: nothing
// typed is lost and nothing shows as sent that nobody got. A retry keeps the
// message's id, so that a first try that arrived late after all (a frozen
// Redis that took it once it thawed) and the retry show once.
import { h } from '../dom.js';
import { t } from '../i18n.js';

export interface Chat {
  panel: HTMLElement;
  /** A message from someone else; one whose sender and messageId were shown already (a retry of one that arrived late) is not shown again. */
  append(message: { name: string; text: string; from: string; messageId?: string }): void;
}

/** A new message's id: the same on every retry of it. */
function newMessageId(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `send` resolves to whether the server accepted the message. */
export function createChat(send: (message: string, messageId: string) => Promise<boolean>): Chat {
  const shown = new Set<string>();
  const list = h('ol', { class: 'chat-list', 'aria-live': 'polite', 'aria-label': t('chat.messages') });
  const input = h('input', { id: 'chat-input', 'data-testid': 'chat-input', type: 'text', maxlength: 2000, autocomplete: 'off' });

  function line(name: string, message: string): HTMLLIElement {
    const item = h('li', { 'data-testid': 'chat-message' }, h('strong', {}, `${name}: `), message);
    list.append(item);
    list.scrollTop = list.scrollHeight;
    return item;
  }

  /** Sends one of our own messages shown as `item`; on failure it offers to try again. */
  async function deliver(item: HTMLLIElement, message: string, messageId: string) {
    item.dataset.status = 'sending';
    item.querySelector('.chat-failed')?.remove();
    if (await send(message, messageId)) {
      delete item.dataset.status;
      return;
    }
    item.dataset.status = 'failed';
    const retry = h('button', { type: 'button', class: 'chat-retry', 'data-testid': 'chat-retry', onclick: () => void deliver(item, message, messageId) }, t('chat.retry'));
    item.append(h('span', { class: 'chat-failed', role: 'alert' }, h('span', {}, t('chat.notSent')), ' ', retry));
    list.scrollTop = list.scrollHeight;
  }

  async function submit(event: Event) {
    event.preventDefault();
    const message = input.value.trim();
    if (!message) return;
    input.value = '';
    await deliver(line(t('chat.you'), message), message, newMessageId());
  }

  const panel = h(
    'section',
    { class: 'chat', 'aria-labelledby': 'chat-title' },
    h('h2', { id: 'chat-title' }, t('chat.title')),
    list,
    h(
      'form',
      { class: 'chat-form', onsubmit: (e) => void submit(e) },
      h('label', { for: 'chat-input', class: 'visually-hidden' }, t('chat.message')),
      input,
      h('button', { type: 'submit', 'data-testid': 'chat-send' }, t('chat.send')),
    ),
  );
  return {
    panel,
    append({ name, text: message, from, messageId }) {
      if (messageId !== undefined) {
        const key = `${from} ${messageId}`;
        if (shown.has(key)) return;
        shown.add(key);
      }
      line(name, message);
    },
  };
}

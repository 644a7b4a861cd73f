// The chat panel: the messages as text (never markup) and the form to send.
// A message shows as sent only once the server acknowledged it.
import { h } from '../dom.js';
import { t } from '../i18n.js';

export interface Chat {
  panel: HTMLElement;
  append(name: string, message: string): void;
}

/** `send` resolves to whether the server accepted the message. */
export function createChat(send: (message: string) => Promise<boolean>): Chat {
  const list = h('ol', { class: 'chat-list', 'aria-live': 'polite', 'aria-label': t('chat.messages') });
  const input = h('input', { id: 'chat-input', 'data-testid': 'chat-input', type: 'text', maxlength: 2000, autocomplete: 'off' });

  function append(name: string, message: string) {
    list.append(h('li', { 'data-testid': 'chat-message' }, h('strong', {}, `${name}: `), message));
    list.scrollTop = list.scrollHeight;
  }

  async function submit(event: Event) {
    event.preventDefault();
    const message = input.value.trim();
    if (!message) return;
    if (await send(message)) {
      append(t('chat.you'), message);
      input.value = '';
    }
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
  return { panel, append };
}

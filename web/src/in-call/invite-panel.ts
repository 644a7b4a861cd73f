// The host's invite link, shown beside the call once created, with a copy
// button (the clipboard may be refused: then the link is selected to copy).
import { h } from '../dom.js';
import { t } from '../i18n.js';

export interface InvitePanel {
  panel: HTMLElement;
  hasLink(): boolean;
  show(url: string): void;
  /** Focuses and selects the link, once it is on screen. */
  focus(): void;
}

export function createInvitePanel(say: (message: string) => void): InvitePanel {
  const panel = h('div', { class: 'invite' });
  let link: HTMLInputElement | null = null;
  return {
    panel,
    hasLink: () => panel.childElementCount > 0,
    show: (url) => {
      const field = h('input', { id: 'invite-link', 'data-testid': 'invite-link', type: 'text', readonly: true, value: url });
      const copy = h(
        'button',
        {
          type: 'button',
          onclick: () => {
            field.select();
            void navigator.clipboard?.writeText(url).then(
              () => say(t('invite.copied')),
              () => say(t('invite.copyByHand')),
            );
          },
        },
        t('invite.copy'),
      );
      panel.replaceChildren(h('label', { for: 'invite-link' }, t('invite.link')), h('div', { class: 'row' }, field, copy));
      link = field;
    },
    focus: () => {
      link?.focus();
      link?.select();
    },
  };
}

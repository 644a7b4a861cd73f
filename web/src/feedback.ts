// The page after the call: a rating (good / neutral / bad), an optional
// comment, or skip; then on to the return URL. One feedback per participant
// session (the server refuses a second one).
import { h, show } from './dom.js';
import { t } from './i18n.js';
import type { Rating } from './in-call/call-state.js';

const RATINGS = ['good', 'neutral', 'bad'] as const satisfies readonly Rating[];

export interface FeedbackOptions {
  participantToken: string;
  returnUrl: string;
  notice?: string;
  /** The server took the rating (or had one already). */
  onSent(rating: Rating): void;
}

export function showFeedback(root: Element, options: FeedbackOptions): void {
  let rating: Rating | null = null;
  const status = h('p', { class: 'notice', role: 'status' });
  const buttons = RATINGS.map((value) =>
    h('button', { type: 'button', class: 'rating', 'data-testid': `feedback-${value}`, 'aria-pressed': 'false', onclick: () => choose(value) }, t(`feedback.${value}`)),
  );
  const comment = h('textarea', { id: 'feedback-comment', 'data-testid': 'feedback-comment', rows: 3, maxlength: 2000 });
  const submit = h('button', { type: 'submit', class: 'primary', 'data-testid': 'feedback-submit' }, t('feedback.send'));
  const skip = h('button', { type: 'button', 'data-testid': 'feedback-skip', onclick: () => leave() }, t('feedback.skip'));

  function choose(value: Rating) {
    rating = value;
    buttons.forEach((b, i) => b.setAttribute('aria-pressed', String(RATINGS[i] === value)));
  }
  function leave() {
    location.assign(options.returnUrl);
  }
  async function send(event: Event) {
    event.preventDefault();
    if (!rating) {
      status.textContent = t('feedback.chooseFirst');
      buttons[0]!.focus();
      return;
    }
    submit.disabled = true;
    const response = await fetch('/feedback', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ participant_token: options.participantToken, rating, feedback: comment.value.trim() || null }),
    }).catch(() => null);
    if (!response || (response.status !== 201 && response.status !== 409)) {
      submit.disabled = false;
      status.textContent = t('feedback.failed');
      return;
    }
    options.onSent(rating);
    const thanks = h('p', { 'data-testid': 'feedback-thanks', class: 'thanks', tabindex: -1 }, t('feedback.thanks'));
    show(form, thanks);
    thanks.focus();
    setTimeout(leave, 1200);
  }

  const form = h(
    'form',
    { class: 'card feedback', onsubmit: (e) => void send(e) },
    h('h1', { id: 'feedback-title' }, t('feedback.title')),
    options.notice ? h('p', { class: 'notice', role: 'alert' }, options.notice) : null,
    h('div', { role: 'group', 'aria-labelledby': 'feedback-title', class: 'ratings' }, ...buttons),
    h('label', { for: 'feedback-comment' }, t('feedback.comment')),
    comment,
    status,
    h('div', { class: 'actions' }, submit, skip),
  );
  show(root, form);
  buttons[0]!.focus();
}

// The question "may this call be recorded?" (docs/design.md, "Recording with
// consent", "Consent in the call"): a modal dialog that says who asks, what
// is recorded and that declining keeps one in the call, with two buttons.
// A native <dialog> opened with showModal(): the rest of the page is inert
// and focus stays inside it (Tab moves between its buttons); Escape does not
// close it, as closing would be no answer. Focus starts on the first
// button, "Do not record me": nobody agrees by pressing Enter by accident;
// and the two buttons look alike: the page does not lean on the answer.
import { h } from '../dom.js';
import { t } from '../i18n.js';

export interface ConsentDialog {
  /** Asks; `answer` gets true or false once the person chose. A new question replaces one still open. */
  ask(question: { by: string; recording: boolean }, answer: (accepted: boolean) => void): void;
  /** The question was withdrawn (the request ended without this answer). */
  close(): void;
  /** Whether a question is open. */
  readonly open: boolean;
}

export function createConsentDialog(): ConsentDialog {
  const title = h('h2', { id: 'consent-title' }, h('span', { class: 'rec-dot', 'aria-hidden': 'true' }), t('recording.askTitle'));
  const asks = h('p', { id: 'consent-text' });
  const what = h('p', {}, t('recording.whatIsRecorded'));
  const free = h('p', { class: 'hint' }, t('recording.canDecline'));
  const decline = h('button', { type: 'button', 'data-testid': 'consent-decline' }, t('recording.decline'));
  const accept = h('button', { type: 'button', 'data-testid': 'consent-accept' }, t('recording.accept'));
  const dialog = h(
    'dialog',
    { class: 'consent', 'data-testid': 'recording-consent', 'aria-labelledby': 'consent-title', 'aria-describedby': 'consent-text' },
    title,
    asks,
    what,
    free,
    h('div', { class: 'actions' }, decline, accept),
  );
  let answering: ((accepted: boolean) => void) | null = null;

  const answer = (accepted: boolean) => {
    const then = answering;
    answering = null;
    if (dialog.open) dialog.close();
    then?.(accepted);
  };
  decline.addEventListener('click', () => answer(false));
  accept.addEventListener('click', () => answer(true));
  dialog.addEventListener('cancel', (event) => event.preventDefault());

  return {
    ask(question, then) {
      const name = question.by || t('recording.theHost');
      asks.textContent = question.recording ? t('recording.askWhileRecording', { name }) : t('recording.askText', { name });
      answering = then;
      if (!dialog.isConnected) document.body.append(dialog);
      if (!dialog.open) dialog.showModal();
      decline.focus();
    },
    close() {
      answering = null;
      if (dialog.open) dialog.close();
    },
    get open() {
      return dialog.open;
    },
  };
}

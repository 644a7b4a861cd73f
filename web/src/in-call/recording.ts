// Recording with consent on the page (docs/design.md, "Recording with
// consent", "Consent in the call"): the indicator every page shows while the
// call is recorded (in the header, beside the room's name), the question to
// each person asked (recording-consent.ts), the host's record button's
// action (start asks everyone, stop stops), and what the host is told: who
// did not agree, or that this server cannot record. The room's recording
// itself is the call state's (call-state.ts), as the server says it.
import type { ServerMessage } from '../../../src/shared/protocol.js';
import { h } from '../dom.js';
import { errorText, language, t } from '../i18n.js';
import type { Signaling } from '../signaling.js';
import type { CallState } from './call-state.js';
import { createConsentDialog } from './recording-consent.js';
import type { Stage } from './stage.js';

export interface RecordingOptions {
  state: CallState;
  stage: Pick<Stage, 'say' | 'saying' | 'showRecording'>;
  server: Pick<Signaling, 'request'>;
}

export type Recording = ReturnType<typeof createRecording>;

/** "Pat, Sam and Lee", in the page's language. */
const listOf = (names: string[]) => new Intl.ListFormat(language(), { type: 'conjunction' }).format(names);

export function createRecording({ state, stage, server }: RecordingOptions) {
  const label = h('span', {});
  const indicator = h('p', { class: 'recording-indicator', 'data-testid': 'recording-indicator', role: 'status', hidden: true }, h('span', { class: 'rec-dot', 'aria-hidden': 'true' }), label);
  const noticeText = h('p', {});
  const dismiss = h('button', { type: 'button', class: 'dismiss' }, t('recording.dismiss'));
  const notice = h('div', { class: 'recording-notice', role: 'alert', hidden: true }, noticeText, dismiss);
  dismiss.addEventListener('click', () => (notice.hidden = true));
  stage.showRecording(indicator, notice);
  const dialog = createConsentDialog();

  function tell(testId: 'recording-declined' | 'recording-unavailable', text: string) {
    notice.dataset.testid = testId;
    noticeText.textContent = text;
    notice.hidden = false;
  }

  const unsubscribe = state.subscribe((change, now) => {
    if (change.type !== 'recording') return;
    const { state: recording, recorded } = now.recording;
    const wasShown = !indicator.hidden;
    indicator.hidden = recording !== 'recording';
    // Someone who did not agree is told that the call is recorded, and that they are not.
    label.textContent = recorded.includes(now.self.id ?? '') ? t('recording.indicator') : t('recording.indicatorNotYou');
    if (recording === 'recording' && !wasShown) stage.say(t('recording.started'));
    else if (recording !== 'recording' && wasShown) stage.say(t('recording.stopped'));
    // "Everyone is being asked" is over.
    else if (recording === 'idle' && stage.saying() === t('recording.askingEveryone')) stage.say('');
    // The request ended without this page's answer (declined by someone else, withdrawn, or the recording stopped).
    if (recording === 'idle') dialog.close();
    if (recording === 'recording') notice.hidden = true;
  });

  return {
    /** The server's news of the recording; false when the message was not about it. */
    handle(message: ServerMessage): boolean {
      switch (message.type) {
        case 'recording-state':
          state.setRecording(message);
          return true;
        case 'recording-consent-request':
          dialog.ask({ by: message.by, recording: state.now.recording.state === 'recording' }, (accepted) => {
            void server.request({ type: 'recording-consent', askId: message.askId, accepted }).then((reply) => reply.type === 'error' && stage.say(errorText(reply.code)));
            stage.say(accepted ? t('recording.youAgreed') : t('recording.youDeclined'));
          });
          return true;
        case 'recording-declined':
          tell('recording-declined', t(state.now.recording.state === 'recording' ? 'recording.declinedNewcomer' : 'recording.declined', { names: listOf(message.names) }));
          return true;
        default:
          return false;
      }
    },

    /** The host's record button: asks everyone, or stops the recording. */
    async toggle(): Promise<void> {
      const recording = state.now.recording.state;
      if (recording === 'asking') return;
      notice.hidden = true;
      const reply = await server.request({ type: recording === 'recording' ? 'recording-stop' : 'recording-start' });
      if (reply.type !== 'error') return stage.say(recording === 'recording' ? '' : t('recording.askingEveryone'));
      if (reply.code === 'recording-unavailable' || reply.code === 'recording-disabled') return tell('recording-unavailable', errorText(reply.code));
      stage.say(errorText(reply.code));
    },

    stop() {
      unsubscribe();
      dialog.close();
    },
  };
}

// The join screen's check before a consultation (issue 13): the camera
// preview and microphone level are beside it; this adds a speaker test and
// the network check, with a plain verdict (`data-testid="network-verdict"`,
// `data-verdict` ready | relay | blocked | offline).
import { h } from './dom.js';
import { t } from './i18n.js';
import { playTones } from './in-call/chime.js';
import { checkNetwork, type Verdict } from './network-check.js';
import type { IceServerInfo } from '../../src/shared/protocol.js';

const VERDICT_TEXT = {
  checking: 'check.checking',
  ready: 'check.ready',
  relay: 'check.relay',
  blocked: 'check.blocked',
  offline: 'check.offline',
} as const;

export function createPrecallCheck(options: {
  network: { iceServers: IceServerInfo[]; iceTransportPolicy: 'all' | 'relay' };
  ping: () => Promise<number | null>;
}): HTMLElement {
  const verdict = h('p', { class: 'verdict', 'data-testid': 'network-verdict', 'data-verdict': 'checking', role: 'status' }, t(VERDICT_TEXT.checking));
  const show = (state: Verdict | 'checking') => {
    verdict.dataset.verdict = state;
    verdict.textContent = t(VERDICT_TEXT[state]);
  };
  const speaker = h('button', { type: 'button', 'data-testid': 'speaker-test-button', onclick: () => playTones([523, 659, 784, 1047], 0.25) }, t('check.speaker'));
  void checkNetwork(options.network, options.ping).then((result) => show(result.verdict));
  return h(
    'section',
    { class: 'check', 'aria-labelledby': 'check-title' },
    h('h2', { id: 'check-title' }, t('check.title')),
    h('div', { class: 'row check-speaker' }, h('span', {}, t('check.speakerHint')), speaker),
    verdict,
  );
}

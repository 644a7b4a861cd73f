// Entry of the participant pages: the join screen, then the call, then the
// feedback; data for the page comes from the server in a JSON block.
import type { JoinPageData } from '../../src/shared/join-page-data.js';
import './call.css';
import { h, show } from './dom.js';
import { startEmbedBridge } from './embed-bridge.js';
import { obeyParent, reportCallToParent } from './embed-events.js';
import { showFeedback } from './feedback.js';
import { t, useCatalogue } from './i18n.js';
import { prepareCall, type PreparedCall } from './in-call.js';
import { createCallState } from './in-call/call-state.js';
import { rememberedName } from './in-call/reconnection.js';
import { createPrecallCheck } from './precall-check.js';
import { showPrejoin } from './prejoin.js';
import { signalingUrl, warmSocket } from './signaling.js';
import { keepSpareConnection } from './spare-connection.js';

function message(root: Element, title: string, text: string, testId?: string, next?: string) {
  show(
    root,
    h(
      'section',
      { class: 'card message', ...(testId ? { 'data-testid': testId } : {}) },
      h('h1', { tabindex: -1 }, title),
      h('p', {}, text),
      next ? h('a', { href: next, class: 'button primary' }, t('continue')) : null,
    ),
  );
  root.querySelector('h1')?.focus();
}

/** Runs `task` once the page is idle (within a second at most); 200 ms later where requestIdleCallback is missing (Safari). */
function whenIdle(task: () => void) {
  if (typeof requestIdleCallback === 'function') requestIdleCallback(task, { timeout: 1000 });
  else setTimeout(task, 200);
}

async function main() {
  const root = document.getElementById('app')!;
  const data = JSON.parse(document.getElementById('parley-data')!.textContent!) as JoinPageData;
  useCatalogue(data.lang, data.catalogue);
  // In a small box of an integrator's page: no room name above the join screen and the call (docs/embedding.md).
  if (data.embed.minimal) document.documentElement.classList.add('minimal');
  const warm = warmSocket(signalingUrl());
  // After a reload mid-call, the name the person joined with.
  const displayName = rememberedName(data.joinToken) ?? data.displayName;
  // What the call is, from the join screen to the feedback: what shows or reports it subscribes here.
  const state = createCallState({ name: displayName, role: data.role, settings: data.settings });
  const check = createPrecallCheck({ network: data.network, ping: () => warm.ping() });
  // The call's first peer connection, made while the person looks at the preview.
  const spare = keepSpareConnection(data.network);
  const joining = showPrejoin(root, { roomName: data.roomName, displayName, check, onStream: spare.useStream });
  // The call's screen, built and laid out hidden while the person looks at the join screen,
  // once the browser has a moment (Join before that builds it at once).
  let call: PreparedCall | null = null;
  const prepareScreen = () => (call ??= prepareCall({ root, roomName: data.roomName, state }));
  whenIdle(prepareScreen);
  // Framed by a page of the room's frame-ancestors: it hears what happens in the call and may command it
  // (docs/design.md, "Embedding"). Commands act once joined, when the call exists.
  const bridge = startEmbedBridge(data.embed.origins);
  reportCallToParent(state, bridge);
  obeyParent(state, bridge, () => prepareScreen().actions);
  bridge.emit('ready', {});
  const { name, media, preview } = await joining;
  prepareScreen().start({
    joinToken: data.joinToken,
    name,
    stream: media.stream,
    preview,
    socket: warm.take(),
    spare: spare.take(),
    onEnd: ({ kind, joined, returnUrl, message: text, code }) => {
      // The pages after the call are cards again, not the whole window.
      root.classList.remove('in-call');
      const next = returnUrl ?? undefined;
      if (kind === 'denied') return message(root, t('end.denied.title'), t('end.denied.text'), 'waiting-denied');
      if (kind === 'removed') return message(root, t('end.removed.title'), t('end.removed.text'), 'removed');
      // Left the waiting room before being let in: there was no call to rate.
      if (kind === 'left' && !joined) return message(root, t('end.leftWaiting.title'), t('end.leftWaiting.text'), undefined, next);
      if (kind === 'refused') {
        if (code === 'room-closed') return message(root, t('page.closed.title'), t('page.closed.text'), 'room-closed');
        return message(root, t('end.refused.title'), text ?? t('end.refused.text'));
      }
      if (kind === 'replaced') return message(root, t('end.replaced.title'), t('end.replaced.text'));
      // Closed while waiting to be let in: there was no call to rate either.
      if (kind === 'closed' && !joined) return message(root, t('page.closed.title'), t('end.closedWhileWaiting.text'), 'room-closed', next);
      if (kind === 'deleted' || !joined || !returnUrl) return message(root, t('end.deleted.title'), t('end.deleted.text'), 'room-closed', next);
      showFeedback(root, {
        participantToken: joined.participantToken,
        returnUrl,
        ...(kind === 'closed' ? { notice: t('end.closedNotice') } : {}),
        onSent: state.feedbackGiven,
      });
    },
  });
}

void main();

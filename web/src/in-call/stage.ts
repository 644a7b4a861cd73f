// The call's screen: the room's name and a status line on top, the tiles and
// a side column (invite link, chat) in the middle, the control bar below.
// While the participant waits to be let in, the same screen is the waiting
// room: a message, their own tile, and only the controls of their own media.
// Layout lives here and in call.css; the other modules hand it elements.
import { h, show } from '../dom.js';
import { t } from '../i18n.js';

export interface Stage {
  /** The status line, read out by screen readers (reconnected, refusals). */
  say(message: string): void;
  /** The banner shown while this page's own connection to the call is being re-established. */
  setReconnecting(on: boolean): void;
  addTile(tile: HTMLElement): void;
  showSide(...panels: HTMLElement[]): void;
  showControls(...buttons: HTMLElement[]): void;
  /** Whether the screen is the waiting room (DESIGN §7: `data-testid="waiting-room"`). */
  setWaiting(on: boolean): void;
  /** The host's list of people waiting, above the tiles. */
  showWaitingList(panel: HTMLElement): void;
}

export function createStage(root: Element, roomName: string): Stage {
  const status = h('p', { class: 'notice', role: 'status', 'aria-live': 'polite' });
  const reconnecting = h('p', { class: 'reconnecting', 'data-testid': 'reconnecting', role: 'alert', hidden: true }, t('connection.reconnecting'));
  const tiles = h('div', { class: 'tiles' });
  const side = h('div', { class: 'side' });
  const controls = h('div', { class: 'controls', role: 'toolbar', 'aria-label': t('call.controls') });
  const waitingMessage = h(
    'section',
    { class: 'waiting-message', hidden: true },
    h('h2', {}, h('span', { class: 'pulse', 'aria-hidden': 'true' }), t('waiting.heading')),
    h('p', {}, t('waiting.text')),
    h('p', { class: 'hint' }, t('waiting.check')),
  );
  const waitingSlot = h('div', { class: 'waiting-slot' });
  const call = h(
    'div',
    { class: 'call' },
    h('header', { class: 'call-header' }, h('h1', { class: 'room-name' }, roomName), status),
    reconnecting,
    waitingMessage,
    waitingSlot,
    h('div', { class: 'stage' }, tiles, side),
    controls,
  );
  show(root, call);
  return {
    setWaiting: (on) => {
      call.classList.toggle('waiting', on);
      if (on) call.setAttribute('data-testid', 'waiting-room');
      else call.removeAttribute('data-testid');
      waitingMessage.hidden = !on;
    },
    showWaitingList: (panel) => waitingSlot.replaceChildren(panel),
    say: (message) => {
      status.textContent = message;
    },
    setReconnecting: (on) => {
      reconnecting.hidden = !on;
    },
    addTile: (tile) => tiles.append(tile),
    showSide: (...panels) => side.replaceChildren(...panels),
    showControls: (...buttons) => controls.replaceChildren(...buttons),
  };
}

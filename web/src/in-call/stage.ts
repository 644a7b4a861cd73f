// The call's screen: the room's name and a status line on top, the tiles and
// a side column (invite link, chat) in the middle, the control bar below.
// Layout lives here and in call.css; the other modules hand it elements.
import { h, show } from '../dom.js';
import { text } from './strings.js';

export interface Stage {
  /** The status line, read out by screen readers (reconnecting, refusals). */
  say(message: string): void;
  addTile(tile: HTMLElement): void;
  showSide(...panels: HTMLElement[]): void;
  showControls(...buttons: HTMLElement[]): void;
}

export function createStage(root: Element, roomName: string): Stage {
  const status = h('p', { class: 'notice', role: 'status', 'aria-live': 'polite' });
  const tiles = h('div', { class: 'tiles' });
  const side = h('div', { class: 'side' });
  const controls = h('div', { class: 'controls', role: 'toolbar', 'aria-label': text.callControls });
  show(
    root,
    h(
      'div',
      { class: 'call' },
      h('header', { class: 'call-header' }, h('h1', { class: 'room-name' }, roomName), status),
      h('div', { class: 'stage' }, tiles, side),
      controls,
    ),
  );
  return {
    say: (message) => {
      status.textContent = message;
    },
    addTile: (tile) => tiles.append(tile),
    showSide: (...panels) => side.replaceChildren(...panels),
    showControls: (...buttons) => controls.replaceChildren(...buttons),
  };
}

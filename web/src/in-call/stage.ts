// The call's screen (docs/design.md, "Languages and layout"): the room's name and a status line on top,
// the pictures in the middle, the control bar at the bottom, always on
// screen. The stage places the pictures by what the call is:
//   alone          a "waiting for the others" message, oneself as an inset
//   two people     the other person as the main picture, oneself as an inset
//   three or more  a grid that fills the space
//   a shared screen the screen as the main picture, the people in a strip
// While the participant waits to be let in, the same screen is the waiting
// room: a message, their own picture, and only the controls of their media.
// The chat and invite panels sit beside the pictures, or over them on a phone.
// Layout lives here and in call.css; the other modules hand it elements.
import { h } from '../dom.js';
import { t } from '../i18n.js';

export interface Stage {
  /**
   * Puts the call's screen in the document hidden, over the join screen, so
   * that the browser lays it out before it is shown (in-call.ts prepareCall).
   */
  prepare(): void;
  /** Puts the call's screen in place of the join screen (once; later calls do nothing). */
  show(): void;
  /** The status line, read out by screen readers (reconnected, refusals). */
  say(message: string): void;
  /** What the status line shows now. */
  saying(): string;
  /** The banner shown while this page's own connection to the call is being re-established. */
  setReconnecting(on: boolean): void;
  /** A picture (camera or screen) to place; it leaves when it is removed from the document. */
  addTile(tile: HTMLElement): void;
  showSide(...panels: HTMLElement[]): void;
  /** Whether the side panels (chat, invite) are open. */
  setSideOpen(open: boolean): void;
  showControls(...buttons: HTMLElement[]): void;
  /** Whether the screen is the waiting room (docs/design.md, "Waiting room": `data-testid="waiting-room"`). */
  setWaiting(on: boolean): void;
  /** The host's list of people waiting, above the pictures. */
  showWaitingList(panel: HTMLElement): void;
  /** The recording's indicator, in the header beside the room's name, and its notices to the host, above the pictures. */
  showRecording(indicator: HTMLElement, notice: HTMLElement): void;
}

type Layout = 'waiting' | 'solo' | 'duo' | 'grid' | 'screen';

/** Tiles are 4:3 (cameras) or 16:9 (screens): the columns that make each as large as the space allows. */
export function bestColumns(count: number, width: number, height: number, aspect = 4 / 3): number {
  let best = { columns: 1, area: 0 };
  for (let columns = 1; columns <= Math.max(1, count); columns++) {
    const rows = Math.ceil(count / columns);
    const w = Math.min(width / columns, (height / rows) * aspect);
    if (w * (w / aspect) > best.area) best = { columns, area: w * (w / aspect) };
  }
  return best.columns;
}

export function createStage(root: Element, roomName: string): Stage {
  const status = h('p', { class: 'notice status', role: 'status', 'aria-live': 'polite' });
  const reconnecting = h('p', { class: 'reconnecting', 'data-testid': 'reconnecting', role: 'alert', hidden: true }, t('connection.reconnecting'));
  const main = h('div', { class: 'main' });
  const strip = h('div', { class: 'strip' });
  const inset = h('div', { class: 'inset' });
  const alone = h('p', { class: 'alone' }, t('call.alone'));
  const tiles = h('div', { class: 'tiles' }, main, strip, inset);
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
  const recordingSlot = h('span', { class: 'recording-slot' });
  const noticeSlot = h('div', { class: 'waiting-slot' });
  const call = h(
    'div',
    { class: 'call' },
    h('header', { class: 'call-header' }, recordingSlot, h('h1', { class: 'room-name' }, roomName), status),
    reconnecting,
    waitingMessage,
    waitingSlot,
    noticeSlot,
    h('div', { class: 'stage' }, tiles, side),
    controls,
  );

  const known = new Set<HTMLElement>();
  let waiting = false;
  let shown = false;

  /** Puts `wanted` into `container`, moving nothing that is already in place (a moved video keeps playing within a task). */
  function place(container: HTMLElement, wanted: HTMLElement[]) {
    const current = [...container.children];
    if (current.length === wanted.length && current.every((child, i) => child === wanted[i])) return;
    container.replaceChildren(...wanted);
  }

  function arrange() {
    for (const tile of known) if (!tiles.contains(tile)) known.delete(tile);
    const screens = [...known].filter((tile) => tile.classList.contains('screen'));
    const people = [...known].filter((tile) => !tile.classList.contains('screen'));
    const self = people.find((tile) => tile.classList.contains('self'));
    const others = people.filter((tile) => tile !== self);
    let layout: Layout;
    if (waiting) layout = 'waiting';
    else if (screens.length) layout = 'screen';
    else if (others.length === 0) layout = 'solo';
    else if (others.length === 1) layout = 'duo';
    else layout = 'grid';
    const selfInset = (layout === 'solo' || layout === 'duo') && self ? [self] : [];
    place(main, layout === 'waiting' ? people : layout === 'screen' ? screens : layout === 'grid' ? people : layout === 'duo' ? others : [alone]);
    place(strip, layout === 'screen' ? people : []);
    place(inset, selfInset);
    tiles.dataset.layout = layout;
    fitGrid();
  }

  function fitGrid() {
    const count = main.children.length;
    const aspect = tiles.dataset.layout === 'screen' ? 16 / 9 : 4 / 3;
    const columns = count > 1 ? bestColumns(count, main.clientWidth, main.clientHeight, aspect) : 1;
    main.style.setProperty('--columns', String(columns));
    main.style.setProperty('--rows', String(Math.max(1, Math.ceil(count / columns))));
  }

  // Tiles leave by being removed from the document (a peer left, a share stopped). Asked of
  // the tiles' container, not the document: the screen is built before it is shown.
  new MutationObserver(() => {
    if ([...known].some((tile) => !tiles.contains(tile))) arrange();
  }).observe(tiles, { childList: true, subtree: true });
  new ResizeObserver(fitGrid).observe(main);

  return {
    prepare: () => {
      if (call.isConnected) return;
      call.classList.add('ahead');
      root.append(call);
    },
    show: () => {
      if (shown) return;
      shown = true;
      root.classList.add('in-call');
      // Laid out ahead (prepare), it stays where it is: put in again, it would be laid out again.
      if (!call.isConnected) root.append(call);
      for (const node of [...root.childNodes]) if (node !== call) node.remove();
      call.classList.remove('ahead');
      // A video given its stream out of the document or hidden may not have
      // started in Chromium: it stayed paused, black (own picture).
      for (const video of call.querySelectorAll('video')) if (video.paused) void video.play().catch(() => {});
    },
    setWaiting: (on) => {
      waiting = on;
      call.classList.toggle('waiting', on);
      if (on) call.setAttribute('data-testid', 'waiting-room');
      else call.removeAttribute('data-testid');
      waitingMessage.hidden = !on;
      arrange();
    },
    showWaitingList: (panel) => waitingSlot.replaceChildren(panel),
    showRecording: (indicator, notice) => {
      recordingSlot.replaceChildren(indicator);
      noticeSlot.replaceChildren(notice);
    },
    say: (message) => {
      status.textContent = message;
    },
    saying: () => status.textContent ?? '',
    setReconnecting: (on) => {
      reconnecting.hidden = !on;
    },
    addTile: (tile) => {
      known.add(tile);
      // In the document at once (a track may arrive before the next arrangement), then in its place.
      main.append(tile);
      arrange();
    },
    // Rendered again on every change of state: what is already in place stays (no new style and layout).
    showSide: (...panels) => place(side, panels),
    setSideOpen: (open) => call.classList.toggle('side-open', open),
    showControls: (...buttons) => place(controls, buttons),
  };
}

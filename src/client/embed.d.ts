// Types of `<parley-room>`, the element `{PUBLIC_URL}/embed.js` defines, and
// of the postMessage protocol underneath it (docs/embedding.md). The contract:
// the join page (web/src/embed-bridge.ts) and the element
// (web/src/embed/parley-room.ts) are checked against these by the compiler.
//
//   <script type="module" src="https://parley.example/embed.js"></script>
//   <parley-room url="https://parley.example/join/…" name="Pat" lang="de"></parley-room>
//
//   import type {} from './parley/src/client/embed.js'; // the tag's type in querySelector
//   const room = document.querySelector('parley-room')!;
//   room.addEventListener('join', (e) => console.log(e.detail.role, e.detail.display_name));
//   room.toggleMicrophone(false);

/** A participant's role in the call. */
export type ParleyRole = 'host' | 'guest';

/**
 * Why this page's part of the call ended: `left` (the person or `leave()`),
 * `removed` (by the host), `denied` (not let in from the waiting room),
 * `closed` (the room was closed), `ended` (the room was deleted, or the same
 * link was opened in another tab or device, which took over), `error` (the
 * server refused the join: an unknown, full or otherwise unusable link).
 */
export type ParleyLeaveReason = 'left' | 'removed' | 'denied' | 'closed' | 'ended' | 'error';

/** The `detail` of each event. Never a token or a join URL. */
export interface ParleyEventDetails {
  /** The join screen is up and listening for commands. */
  ready: Record<string, never>;
  /** This participant is in the call (after Join, or when the host let them in). */
  join: { role: ParleyRole; display_name: string };
  /** This participant waits for the host to let them in. */
  waiting: Record<string, never>;
  /** This participant is out of the call, and why. */
  leave: { reason: ParleyLeaveReason };
  /** Someone else is in the call: each one present when this participant joins, then each newcomer. */
  participant_join: { role: ParleyRole; display_name: string };
  /** Someone else left the call (or their connection stayed away past the grace). */
  participant_leave: { role: ParleyRole; display_name: string };
  /** To a host: someone waits to be let in. */
  knock: { display_name: string };
  /** This page's own connection to the call was lost and is being re-established, or is back. */
  connection_status_change: { status: 'connected' | 'reconnecting' };
  microphone_toggle: { enabled: boolean };
  camera_toggle: { enabled: boolean };
  /** The rating this participant gave after the call. */
  feedback: { rating: 'good' | 'neutral' | 'bad' };
  /**
   * The call is being recorded (everyone asked agreed), and whether this participant is: false for
   * someone who did not agree; told again, with true, when they agree later.
   */
  recording_started: { recorded: boolean };
  /** The recording of the call stopped. */
  recording_stopped: Record<string, never>;
}

export type ParleyEventName = keyof ParleyEventDetails;

/** What `<parley-room>` dispatches: a CustomEvent per event (no bubbling). */
export type ParleyRoomEventMap = { [K in ParleyEventName]: CustomEvent<ParleyEventDetails[K]> };

/** The arguments of each command. */
export interface ParleyCommandDetails {
  /** Sets the microphone on (`true`) or off (`false`), or switches it over. */
  toggle_microphone: { enabled?: boolean };
  toggle_camera: { enabled?: boolean };
  /** Opens or closes the chat panel (where the room has chat). */
  toggle_chat: Record<string, never>;
  /** Leaves the call (or the waiting room), as the Leave button does. */
  leave: Record<string, never>;
  /** Host only: lets in the person waiting longest, or the first waiting under this name. */
  admit: { display_name?: string };
  /** Host only: turns away the person waiting longest, or the first waiting under this name. */
  deny: { display_name?: string };
}

export type ParleyCommandName = keyof ParleyCommandDetails;

/** The protocol's version: the value of `parley` in every message. */
export type ParleyProtocolVersion = 1;

/** A message the join page posts to its parent window (to the parent's exact origin only). */
export type ParleyEventMessage = {
  [K in ParleyEventName]: { parley: ParleyProtocolVersion; event: K; detail: ParleyEventDetails[K] };
}[ParleyEventName];

/**
 * A message the parent window posts to the join page's iframe (with the join
 * page's origin as targetOrigin). Anything else, or from any other window or
 * origin, is ignored. `detail` may be left out where every argument is optional.
 */
export type ParleyCommandMessage = {
  [K in ParleyCommandName]: { parley: ParleyProtocolVersion; command: K; detail?: ParleyCommandDetails[K] };
}[ParleyCommandName];

export interface ParleyRoomElement extends HTMLElement {
  /** The join URL (attribute `url`). Changing it, `name`, `lang` or `minimal` loads the call page again. */
  url: string;
  /** Pre-fills the display name (attribute `name`). */
  name: string;
  /** No header: for small boxes (boolean attribute `minimal`). */
  minimal: boolean;
  /** The call's iframe, once the element is in the document with a `url`. */
  readonly iframe: HTMLIFrameElement | null;
  toggleMicrophone(enabled?: boolean): void;
  toggleCamera(enabled?: boolean): void;
  toggleChat(): void;
  leave(): void;
  /** Host only: the first waiting, or the first waiting under this name. */
  admit(displayName?: string): void;
  deny(displayName?: string): void;
  addEventListener<K extends ParleyEventName>(type: K, listener: (this: ParleyRoomElement, event: ParleyRoomEventMap[K]) => unknown, options?: boolean | AddEventListenerOptions): void;
  addEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions): void;
  removeEventListener<K extends ParleyEventName>(type: K, listener: (this: ParleyRoomElement, event: ParleyRoomEventMap[K]) => unknown, options?: boolean | EventListenerOptions): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject, options?: boolean | EventListenerOptions): void;
}

/** embed.js's own version (semantic versioning; the protocol's is `parley: 1`). */
export declare const version: string;

/** The element's class, registered as `parley-room` when embed.js loads. */
export declare const ParleyRoom: { new (): ParleyRoomElement; prototype: ParleyRoomElement };

declare global {
  interface HTMLElementTagNameMap {
    'parley-room': ParleyRoomElement;
  }
}

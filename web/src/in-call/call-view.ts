// What the call's screen offers as the call changes: the control bar's
// buttons and their state, the side column (panels.ts), and the screen
// itself as the waiting room or the call (stage.ts). Rendered again on every
// change of the call state that touches them; what is already in place stays.
import type { CallChange, CallState } from './call-state.js';
import type { Controls } from './controls.js';
import type { LocalMedia } from './local-media.js';
import type { Panels } from './panels.js';
import type { Stage } from './stage.js';

export interface CallViewOptions {
  state: CallState;
  stage: Pick<Stage, 'showControls' | 'setWaiting' | 'setReconnecting'>;
  controls: Pick<Controls, 'render'>;
  panels: Pick<Panels, 'render'>;
  /** The camera and microphone in use, once the call started. */
  media(): LocalMedia | null;
}

export type CallView = ReturnType<typeof createCallView>;

const RENDERED_ON: ReadonlySet<CallChange['type']> = new Set(['phase', 'settings', 'microphone', 'camera', 'recording']);

export function createCallView(options: CallViewOptions) {
  const { state, stage } = options;
  let waitingRoom = false;

  function render() {
    const now = state.now;
    if (now.phase === 'ended') return;
    // Someone waiting has only their own camera and microphone, and their own level meter to check them.
    const waiting = now.phase === 'waiting';
    const canShare = !waiting && now.settings.screenshare && typeof navigator.mediaDevices?.getDisplayMedia === 'function';
    const canInvite = !waiting && now.settings.invites && now.self.role === 'host';
    const canChat = !waiting && now.settings.chat;
    const shown = options.panels.render({ chat: canChat, invite: canInvite });
    stage.showControls(
      ...options.controls.render({
        audioOn: now.microphone,
        videoOn: now.camera,
        hasAudio: now.hasMicrophone,
        hasVideo: now.hasCamera,
        canSwitchCamera: options.media()?.canSwitchCamera() ?? false,
        canShare,
        canInvite,
        canChat,
        chatOpen: shown === 'chat',
        devicesOpen: shown === 'devices',
        fullscreen: document.fullscreenElement !== null,
        // Only a host records, only where the room allows it (docs/design.md, "Recording with consent").
        recording: !waiting && now.self.role === 'host' && now.recording.enabled ? now.recording.state : null,
      }),
    );
  }

  const unsubscribe = state.subscribe((change, now) => {
    if (change.type === 'connection') stage.setReconnecting(change.status === 'reconnecting');
    // The same screen is the waiting room, then the call.
    if (change.type === 'phase' && (now.phase === 'waiting' || now.phase === 'in-call') && waitingRoom !== (now.phase === 'waiting')) {
      waitingRoom = now.phase === 'waiting';
      stage.setWaiting(waitingRoom);
    }
    if (RENDERED_ON.has(change.type)) render();
  });
  document.addEventListener('fullscreenchange', render);

  return {
    render,
    stop() {
      unsubscribe();
      document.removeEventListener('fullscreenchange', render);
    },
  };
}

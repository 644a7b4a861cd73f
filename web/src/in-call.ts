// The call page after the join screen, as a call state plus small
// controllers (in-call/): the state (call-state.ts) holds what the call is
// and tells its subscribers of every change; the screen (stage.ts), the
// control bar and side column (call-view.ts, panels.ts) and the host's
// controls (host-controls.ts) are built here while the join screen shows; on
// Join the call itself starts over them (call-session.ts: the connection, the
// others and one's own media, the connections' health, the way out).
import type { EmbedActions } from './embed-events.js';
import type { CallState } from './in-call/call-state.js';
import { createCallView } from './in-call/call-view.js';
import { startCall, type CallOptions, type CallSession } from './in-call/call-session.js';
import { createControls } from './in-call/controls.js';
import { createHostControls } from './in-call/host-controls.js';
import { createPanels } from './in-call/panels.js';
import { createRecording } from './in-call/recording.js';
import { createStage } from './in-call/stage.js';
import type { Signaling } from './signaling.js';

/** What the page knows of the call before Join: enough to build and lay out its screen ahead. */
export interface CallScreenOptions {
  root: Element;
  roomName: string;
  /** The call as the page knows it: the link's role and the room's settings when the page was served, until the server says more. */
  state: CallState;
}

export interface PreparedCall {
  /** Joins: connects, and shows the call's screen with the server's answer. Once. */
  start(options: CallOptions): void;
  /** What the framing page's commands do (embed-events.ts): the same as the controls. */
  actions: EmbedActions;
}

/**
 * Builds the call's screen while the join screen shows, and puts it in the
 * document hidden (stage.ts prepare), so that the browser lays it out then.
 * Its first style and layout were one long task (16–30 ms here, more on a
 * slow phone) right when the other side's answer came in, and the answer
 * waited for it (bench/README.md, browser). Shown, it needs a restyle of its
 * elements (visibility), a small layout and a paint.
 */
export function prepareCall(screen: CallScreenOptions): PreparedCall {
  const { state } = screen;
  /** The call once joined: what the controls act on. */
  let session: CallSession | null = null;
  // The controls built ahead reach the server only once the call started (they are hidden until then).
  const server: Pick<Signaling, 'request'> = { request: (message, timeoutMs) => session!.signaling.request(message, timeoutMs) };

  const stage = createStage(screen.root, screen.roomName);
  const controls = createControls({
    toggleAudio: () => state.setMicrophone(!state.now.microphone),
    toggleVideo: () => state.setCamera(!state.now.camera),
    switchCamera: () => void session?.switchCamera(),
    toggleScreen: () => void session?.toggleScreen(),
    invite: () => void host.invite(),
    toggleChat: () => panels.toggle('chat'),
    toggleDevices: () => panels.toggle('devices'),
    toggleFullscreen: () => void (document.fullscreenElement ? document.exitFullscreen() : document.documentElement.requestFullscreen()).catch(() => {}),
    toggleRecording: () => void recording.toggle(),
    leave: () => void session?.leave(),
  });
  const media = () => session?.devices ?? null;
  const panels = createPanels({ state, stage, server, controls, media, onChange: () => view.render() });
  const host = createHostControls({ state, stage, server, controls, panels });
  const recording = createRecording({ state, stage, server });
  const view = createCallView({ state, stage, controls, panels, media });
  view.render();
  stage.prepare();

  return {
    start(options) {
      session ??= startCall({ state, stage, controls, panels, host, recording, view }, options);
    },
    actions: {
      setMicrophone: state.setMicrophone,
      setCamera: state.setCamera,
      toggleChat: () => panels.toggle('chat'),
      leave: () => void session?.leave(),
      decide: host.decide,
    },
  };
}

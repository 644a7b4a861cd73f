// The call from Join on, over the screen built ahead (../in-call.ts): the
// connection to the server and staying in the call across drops
// (reconnection.ts), the others and the connections to them
// (participants.ts), one's own media (own-media.ts) and screen
// (screen-share.ts), watching the connections (connection-monitor.ts); the
// server's messages routed to them; and the way out: leave, ejection when the
// room closes, being opened elsewhere or turned away by the host.
import type { ServerMessage } from '../../../src/shared/protocol.js';
import { errorText, t } from '../i18n.js';
import type { SpareConnection } from '../spare-connection.js';
import type { CallState, EndKind } from './call-state.js';
import type { CallView } from './call-view.js';
import { startConnectionMonitor } from './connection-monitor.js';
import type { Controls } from './controls.js';
import type { HostControls } from './host-controls.js';
import { startOwnMedia } from './own-media.js';
import type { Panels } from './panels.js';
import { createParticipants, type Participants } from './participants.js';
import type { Recording } from './recording.js';
import { connectCall, type Joined } from './reconnection.js';
import { createScreenShare, type ScreenShare } from './screen-share.js';
import type { Stage } from './stage.js';

/** The longest the join screen stays after Join when the server has not answered yet. */
const SHOW_CALL_AFTER_MS = 150;
/** The longest the call's screen waits, after `joined`, for the answers to the newcomer's offers. */
const SHOW_AFTER_ANSWERS_MAX_MS = 100;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface CallOptions {
  joinToken: string;
  name: string;
  stream: MediaStream;
  /** The join screen's camera preview, playing `stream`, for the call's own tile. */
  preview?: HTMLVideoElement;
  /** A signaling connection opened ahead (warmSocket), if one is usable. */
  socket: WebSocket | null;
  /** A peer connection made ahead for `stream` (spare-connection.ts prepareConnection), if there is one. */
  spare?: SpareConnection | null;
  /** The call (or the wait) is over for this participant: what to show next. */
  onEnd(end: { kind: EndKind; joined: Joined | null; returnUrl: string | null; message?: string; code?: string }): void;
}

/** The call's screen and the controllers built with it before Join (prepareCall). */
export interface CallScreen {
  state: CallState;
  stage: Stage;
  controls: Controls;
  panels: Panels;
  host: HostControls;
  recording: Recording;
  view: CallView;
}

export type CallSession = ReturnType<typeof startCall>;

/** The server's news during the call, each to the part of the page it concerns. */
async function route(
  message: ServerMessage,
  to: Pick<CallScreen, 'state' | 'stage' | 'panels' | 'recording'> & { participants: Pick<Participants, 'handle'>; screenShare: Pick<ScreenShare, 'stop'> },
): Promise<void> {
  if (to.recording.handle(message)) return;
  switch (message.type) {
    case 'chat':
      return to.panels.chatMessage(message);
    case 'settings':
      to.state.setSettings(message.settings);
      if (!message.settings.screenshare) to.screenShare.stop(false);
      return;
    case 'participant-waiting':
      return to.state.knocked([message.peer]);
    case 'waiting-ended':
      return to.state.knockEnded(message.peerId);
    case 'error':
      return to.stage.say(errorText(message.code));
    default:
      return to.participants.handle(message);
  }
}

export function startCall(screen: CallScreen, options: CallOptions) {
  const { state, stage, panels, view } = screen;
  const { stream } = options;
  let showTimer: ReturnType<typeof setTimeout> | undefined;

  const connection = connectCall({
    joinToken: options.joinToken,
    displayName: options.name,
    socket: options.socket,
    // Read when the join leaves, once the participants' mesh below exists.
    firstOffer: () => participants.mesh.spareOffer(),
    onDown: () => {
      showScreen();
      monitor.lost();
    },
    onJoinDelayed: () => {
      showScreen();
      stage.say(t('call.joinDelayed'));
    },
    onDoubt: (inDoubt) => monitor.doubt(inDoubt),
    onJoined,
    onWaiting: (entry) => {
      showScreen();
      state.waiting(entry.self);
      monitor.rejoined();
    },
    onMessage: (message) => void route(message, { state, stage, panels, recording: screen.recording, participants, screenShare }),
    onEnd: finish,
  });
  const { signaling } = connection;

  const participants = createParticipants({
    state,
    stage,
    host: screen.host,
    signaling,
    stream,
    onConnectionState: (peerId, connectionState) => monitor.connectionState(peerId, connectionState),
    onFlowing: (peerId) => monitor.peerFlowing(peerId),
    flowing: (pc) => monitor.flowing(pc),
    announceMedia: () => media.announce(),
    announceScreen: () => screenShare.announceAgain(),
  });
  participants.mesh.addTracks(stream);
  if (options.spare) participants.mesh.useSpare(options.spare);
  // The join leaves before the rest is set up: the server answers while the page works.
  signaling.connect(options.socket);
  state.joining(options.name, stream);

  const media = startOwnMedia({
    state,
    stage,
    stream,
    ...(options.preview ? { preview: options.preview } : {}),
    mesh: participants.outgoing,
    signaling,
    onDevicesChanged: panels.refreshDevices,
    onSpeaker: participants.setSpeaker,
    onCamerasCounted: view.render,
  });
  const monitor = startConnectionMonitor({
    state,
    stage,
    peers: participants.tiles,
    connections: () => participants.byPeer(),
    measured: () => participants.measured(),
    signaling,
  });
  const screenShare = createScreenShare({
    request: (message) => signaling.request(message),
    tellStopped: () => signaling.send({ type: 'screenshare-stop' }),
    mesh: participants.outgoing,
    say: stage.say,
    onSharing: screen.controls.setSharing,
  });

  view.render();
  /**
   * The call's screen is shown with the server's answer (in onJoined after
   * the offers, onWaiting, ...): before it, the page reads `joined` first
   * (bench/README.md, browser). Without an answer it shows after
   * SHOW_CALL_AFTER_MS all the same.
   */
  showTimer = setTimeout(showScreen, SHOW_CALL_AFTER_MS);

  async function onJoined(joined: Joined) {
    // The connections first, the screen after: what the others wait for is the offer (bench/README.md, browser).
    const answers = participants.enter(joined);
    state.joined(joined);
    stage.say(joined.resumed ? t('connection.reconnected') : '');
    state.setKnocking(joined.waiting);
    // Showing the screen is still a restyle and a paint of the whole window (its style and
    // layout were made ahead, prepareCall): before the answers are read it would hold them
    // back, and the connections with them (bench/README.md, browser).
    if (answers.length) void Promise.race([Promise.all(answers), delay(SHOW_AFTER_ANSWERS_MAX_MS)]).then(() => state.now.phase === 'ended' || showScreen());
    else showScreen();
    monitor.rejoined();
    media.announce();
    await screenShare.announceAgain();
  }

  async function leave() {
    screen.controls.setLeaving();
    await monitor.flush();
    await signaling.request({ type: 'leave' }, 3000);
    finish('left');
  }

  function finish(kind: EndKind, message?: string, code?: string) {
    if (state.now.phase === 'ended') return;
    state.ended(kind);
    // What follows the call replaces the join screen itself: the call's screen must not come after it.
    clearTimeout(showTimer);
    signaling.close();
    participants.close();
    monitor.stop();
    view.stop();
    screenShare.stop(false);
    media.stop();
    screen.host.stop();
    screen.recording.stop();
    // Kept when turned away: a reload sends the token again and is refused as itself, not let in as someone new.
    if (kind !== 'replaced' && kind !== 'denied' && kind !== 'removed') connection.forget();
    options.onEnd({ kind, joined: connection.joined(), returnUrl: connection.returnUrl(), ...(message ? { message } : {}), ...(code ? { code } : {}) });
  }

  function showScreen() {
    clearTimeout(showTimer);
    media.takePreview();
    stage.show();
  }

  return {
    signaling,
    leave,
    switchCamera: () => media.devices.switchCamera().then(view.render),
    toggleScreen: () => screenShare.toggle(),
    devices: media.devices,
  };
}

// The call: puts together the screen (in-call/stage.ts and the tiles), the
// controls, chat, invites and screen sharing as the room's settings allow
// (and as they change), the peer connections (mesh.ts) and staying in the
// call across dropped connections (in-call/reconnection.ts), the waiting
// room and the host's decisions (in-call/waiting-list.ts), down to the way
// out: leave, ejection when the room closes, being opened elsewhere or
// turned away by the host.
import type { RoomSettings, ServerMessage } from '../../src/shared/protocol.js';
import { createChat } from './in-call/chat.js';
import { chime } from './in-call/chime.js';
import { createConnectionHealth, type ConnectionHealth } from './in-call/connection-health.js';
import { createControls } from './in-call/controls.js';
import { createDevicesPanel } from './in-call/devices-panel.js';
import { createInvitePanel } from './in-call/invite-panel.js';
import { createLocalMedia, type LocalMedia } from './in-call/local-media.js';
import { createLocalTile, type LocalTile } from './in-call/local-tile.js';
import { watchMediaFlow, type MediaWatch } from './in-call/media-watch.js';
import { reportNetwork } from './in-call/network-report.js';
import { watchQuality } from './in-call/quality.js';
import { connectCall, type CallConnection, type EndKind as ConnectionEnd, type Joined } from './in-call/reconnection.js';
import { createRemotePeers } from './in-call/remote-peers.js';
import { createScreenShare, type ScreenShare } from './in-call/screen-share.js';
import { createStage } from './in-call/stage.js';
import { errorText, t } from './i18n.js';
import { createWaitingList } from './in-call/waiting-list.js';
import { stopStream } from './media.js';
import { Mesh } from './mesh.js';
import type { SpareConnection } from './spare-connection.js';

type EndKind = 'left' | ConnectionEnd;

/** The longest the join screen stays after Join when the server has not answered yet. */
const SHOW_CALL_AFTER_MS = 150;
/** The longest the call's screen waits, after `joined`, for the answers to the newcomer's offers. */
const SHOW_AFTER_ANSWERS_MAX_MS = 100;

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** What the page knows of the call before Join: enough to build and lay out its screen ahead. */
export interface CallScreenOptions {
  root: Element;
  roomName: string;
  /** The join link's role (the server confirms it in `joined`). */
  role: 'host' | 'guest';
  /** The room's settings when the page was served (`joined` and `settings` bring them up to date). */
  settings: RoomSettings;
}

export interface CallOptions {
  joinToken: string;
  name: string;
  stream: MediaStream;
  /** The join screen's camera preview, playing `stream`, for the call's own tile. */
  preview?: HTMLVideoElement;
  /** A signaling connection opened ahead (warmSocket), if one is usable. */
  socket: WebSocket | null;
  /** A peer connection made ahead for `stream` (mesh.ts prepareConnection), if there is one. */
  spare?: SpareConnection | null;
  /** The call (or the wait) is over for this participant: what to show next. */
  onEnd(end: { kind: EndKind; joined: Joined | null; returnUrl: string | null; message?: string; code?: string }): void;
}

export interface PreparedCall {
  /** Joins: connects, and shows the call's screen with the server's answer. Once. */
  start(options: CallOptions): void;
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
  let settings = screen.settings;
  let ended = false;
  /** Waiting for a host to let this participant in: the screen is the waiting room. */
  let waiting = false;
  let audioOn = true;
  let videoOn = true;

  // The parts of the call that need the Join (its options, media and connections), set by start().
  let options!: CallOptions;
  let stream: MediaStream | null = null;
  let connection: CallConnection | null = null;
  let signaling!: CallConnection['signaling'];
  let mesh!: Mesh;
  let self: LocalTile | null = null;
  let localMedia: LocalMedia | null = null;
  let health!: ConnectionHealth;
  let network!: ReturnType<typeof reportNetwork>;
  let stopQuality = () => {};
  let mediaWatch!: MediaWatch;
  let screenShare!: ScreenShare;
  let showTimer: ReturnType<typeof setTimeout> | undefined;

  const stage = createStage(screen.root, screen.roomName);
  /** Which side panel is open: the chat (open from the start on a wide screen), the devices, or none. */
  let panel: 'chat' | 'devices' | null = window.matchMedia('(min-width: 60rem)').matches ? 'chat' : null;
  let unread = 0;
  const controls = createControls({
    toggleAudio,
    toggleVideo,
    switchCamera: () => void localMedia?.switchCamera().then(render),
    toggleScreen: () => void screenShare.toggle(),
    invite: () => void invite(),
    toggleChat: () => openPanel(panel === 'chat' ? null : 'chat'),
    toggleDevices: () => openPanel(panel === 'devices' ? null : 'devices'),
    toggleFullscreen: () => void (document.fullscreenElement ? document.exitFullscreen() : document.documentElement.requestFullscreen()).catch(() => {}),
    leave: () => void leave(),
  });
  const invitePanel = createInvitePanel(stage.say);
  const devicesPanel = createDevicesPanel({
    camera: (id) => void localMedia?.useCamera(id),
    microphone: (id) => void localMedia?.useMicrophone(id),
    speaker: (id) => localMedia?.useSpeaker(id),
  });
  const chat = createChat(async (message, messageId) => {
    const reply = await signaling.request({ type: 'chat', text: message, messageId });
    // Not sent for want of a path between the nodes: the line itself says so and offers Retry; other refusals say why.
    if (reply.type === 'error' && reply.code !== 'unavailable') stage.say(errorText(reply.code));
    return reply.type === 'ack';
  });

  const peers = createRemotePeers({
    addTile: stage.addTile,
    showsMeters: () => settings.audioIndicator,
    onRemove: (peerId) => mesh.remove(peerId),
    canRemove: (info) => isHost() && info.role === 'guest',
    requestRemove: (info) => void removePeer(info.id, info.name),
  });

  const waitingList = createWaitingList({
    decide: async (peerId, decision) => {
      const reply = await signaling.request({ type: decision, peerId });
      return reply.type === 'error' ? errorText(reply.code) : null;
    },
    say: stage.say,
    chime,
  });
  stage.showWaitingList(waitingList.panel);
  render();
  stage.prepare();

  // Where the browser tells of network changes, they are hints to check the connection now.
  const onNetworkChange = () => signaling.probe();
  const networkInfo = (navigator as Navigator & { connection?: EventTarget }).connection;

  return { start };

  function start(callOptions: CallOptions) {
    if (connection) return;
    options = callOptions;
    const media = callOptions.stream;
    stream = media;
    audioOn = media.getAudioTracks().length > 0;
    videoOn = media.getVideoTracks().length > 0;

    connection = connectCall({
      joinToken: options.joinToken,
      displayName: options.name,
      socket: options.socket,
      // Read when the join leaves, once the mesh below exists.
      firstOffer: () => mesh.spareOffer(),
      onDown: () => {
        showScreen();
        health.lost();
      },
      onJoinDelayed: () => {
        showScreen();
        stage.say(t('call.joinDelayed'));
      },
      onDoubt: (inDoubt) => health.doubt(inDoubt),
      onJoined,
      onWaiting: (entry) => {
        showScreen();
        waiting = true;
        stage.setWaiting(true);
        self?.setName(entry.self.name);
        health.rejoined();
        render();
      },
      onMessage: (message) => void onMessage(message),
      onEnd: finish,
    });
    signaling = connection.signaling;

    mesh = new Mesh('', {}, {
      send: (to, data) => signaling.send({ type: 'signal', to, data }),
      onTrack: (peerId, track, from) => peers.track(peerId, track, from),
      onState: (peerId, state) => {
        if (state === 'connected') health.peerFlowing(peerId);
        if (state === 'disconnected' || state === 'failed') health.peerLost(peerId);
      },
    });
    mesh.addTracks(media);
    if (options.spare) mesh.useSpare(options.spare);
    // The join leaves before the rest is set up: the server answers while the page works.
    signaling.connect(options.socket);

    self = createLocalTile(stage, options.name, media, options.preview);
    document.addEventListener('fullscreenchange', render);
    localMedia = createLocalMedia(media, {
      mesh,
      onTrackChanged: (kind) => {
        if (kind === 'audio') self?.rebindMeter();
        if (localMedia) void devicesPanel.refresh(localMedia.current());
      },
      onSpeaker: (id) => peers.setSpeaker(id),
    });
    void localMedia.refresh().then(render);

    health = createConnectionHealth({
      setBanner: stage.setReconnecting,
      say: stage.say,
      saying: stage.saying,
      peers,
      connections: () => mesh.byPeer(),
      signalingHealthy: () => signaling.healthy,
      ownQueueMs: () => signaling.queueMs,
      probe: () => signaling.probe(),
    });
    // The server keeps a summary of what the connections measured (the participant sessions, docs/api.md).
    network = reportNetwork((report) => signaling.send(report));
    stopQuality = watchQuality(() => mesh.byPeer(), (peerId, quality) => {
      health.quality(peerId, quality);
      network.record(peerId, quality);
    });
    mediaWatch = watchMediaFlow(() => mesh.byPeer(), {
      // Is it us? The server answers at once if our own connection is fine.
      onStall: () => signaling.probe(),
      onLost: health.peerLost,
      onFlow: health.peerFlowing,
    });

    window.addEventListener('online', onNetworkChange);
    window.addEventListener('offline', onNetworkChange);
    networkInfo?.addEventListener('change', onNetworkChange);

    screenShare = createScreenShare({
      request: (message) => signaling.request(message),
      tellStopped: () => signaling.send({ type: 'screenshare-stop' }),
      mesh,
      say: stage.say,
      onSharing: controls.setSharing,
    });

    render();
    /**
     * The call's screen is shown with the server's answer (in onJoined after
     * the offers, onWaiting, ...): before it, the page reads `joined` first
     * (bench/README.md, browser). Without an answer it shows after
     * SHOW_CALL_AFTER_MS all the same.
     */
    showTimer = setTimeout(showScreen, SHOW_CALL_AFTER_MS);
  }

  function isHost() {
    // The server confirms the link's role in `joined`.
    return (connection?.joined()?.self.role ?? screen.role) === 'host';
  }

  function render() {
    // Someone waiting has only their own camera and microphone, and their own level meter to check them.
    const canShare = !waiting && settings.screenshare && typeof navigator.mediaDevices?.getDisplayMedia === 'function';
    const canInvite = !waiting && settings.invites && isHost();
    const canChat = !waiting && settings.chat;
    // The chosen panel stays chosen while the room has no chat (or the participant waits), and shows once it has.
    const shown = panel === 'chat' && !canChat ? null : panel;
    stage.showControls(
      ...controls.render({
        audioOn,
        videoOn,
        // Before Join, as most people have both (a difference costs a layout of the bar at Join).
        hasAudio: stream ? stream.getAudioTracks().length > 0 : true,
        hasVideo: stream ? stream.getVideoTracks().length > 0 : true,
        canSwitchCamera: localMedia?.canSwitchCamera() ?? false,
        canShare,
        canInvite,
        canChat,
        chatOpen: shown === 'chat',
        devicesOpen: shown === 'devices',
        fullscreen: document.fullscreenElement !== null,
      }),
    );
    // The invite link stays in view once made; chat or devices as chosen.
    stage.showSide(
      ...(canInvite && invitePanel.hasLink() ? [invitePanel.panel] : []),
      ...(shown === 'chat' ? [chat.panel] : shown === 'devices' ? [devicesPanel.panel] : []),
    );
    stage.setSideOpen(shown !== null || (canInvite && invitePanel.hasLink()));
    self?.showMeter(waiting || settings.audioIndicator);
    peers.showMeters(settings.audioIndicator);
  }

  async function onJoined(joined: Joined) {
    settings = joined.settings;
    // The connections first, the screen after: what the others wait for is the offer (bench/README.md, browser).
    const rtcConfig: RTCConfiguration = { iceServers: joined.iceServers as RTCIceServer[], iceTransportPolicy: joined.iceTransportPolicy };
    /** The answers to the new connections' offers (Peer.answered). */
    let answers: Promise<void>[] = [];
    if (joined.resumed && mesh.selfId === joined.self.id) {
      // Back after a drop, as the same participant: keep the tiles and connections of those still here.
      peers.keepOnly(joined.peers.map((p) => p.id));
      for (const info of joined.peers) if (!peers.has(info.id)) peers.add(info);
      mesh.resume(
        joined.peers.map((p) => p.id),
        rtcConfig,
        mediaWatch.flowing,
      );
    } else {
      peers.removeAll();
      mesh.reset(joined.self.id, rtcConfig);
      // The newcomer calls everyone already there; they answer. (A tile added replaces its peer's connection: tile first.)
      // The first offer may have gone with the join already (offeredTo).
      answers = joined.peers.map((info) => {
        peers.add(info);
        return mesh.add(info.id, true, info.id === joined.offeredTo).answered;
      });
    }
    // Alone: the first to come calls this page, which answers.
    if (!joined.peers.length) mesh.readyToAnswer();
    if (waiting) {
      waiting = false;
      stage.setWaiting(false);
    }
    stage.say(joined.resumed ? t('connection.reconnected') : '');
    waitingList.set(joined.waiting);
    self?.setName(joined.self.name);
    // Showing the screen is still a restyle and a paint of the whole window (its style and
    // layout were made ahead, prepareCall): before the answers are read it would hold them
    // back, and the connections with them (bench/README.md, browser).
    if (answers.length) void Promise.race([Promise.all(answers), delay(SHOW_AFTER_ANSWERS_MAX_MS)]).then(() => ended || showScreen());
    else showScreen();
    health.rejoined();
    announceMedia();
    await screenShare.announceAgain();
    render();
  }

  async function onMessage(message: ServerMessage) {
    switch (message.type) {
      case 'peer-joined':
        if (peers.has(message.peer.id)) {
          // Back after its own drop: it restarts the connection; what it missed is sent again.
          mesh.peerBack(message.peer.id);
          if (mesh.isConnected(message.peer.id)) health.peerFlowing(message.peer.id);
        } else {
          peers.add(message.peer);
        }
        // The newcomer missed the announcement of a share in progress.
        await screenShare.announceAgain();
        return;
      case 'peer-reconnecting':
        peers.connectionLost(message.peerId, true);
        return;
      case 'peer-present':
        // Announced again after the server's nodes found each other again (Redis
        // was away): someone new gets a tile, and a connection that never
        // completed starts over (mesh.present decides which side calls).
        if (mesh.isConnected(message.peer.id)) return;
        if (!peers.has(message.peer.id)) peers.add(message.peer);
        mesh.present(message.peer.id);
        // What they missed meanwhile: our microphone and camera state, a share in progress.
        signaling.send({ type: 'media-state', audio: audioOn, video: videoOn });
        await screenShare.announceAgain();
        return;
      case 'peer-left':
        peers.remove(message.peerId);
        return;
      case 'signal':
        return mesh.signal(message.from, message.data);
      case 'ice-servers':
        return mesh.renewIceServers(message.iceServers as RTCIceServer[]);
      case 'chat':
        chat.append(message);
        if (panel !== 'chat' || !settings.chat) controls.setUnread(++unread);
        return;
      case 'media-state':
        return peers.mediaState(message.from, message.audio, message.video);
      case 'screenshare-started':
      case 'screenshare-stopped':
        return peers.screen(message.from, message.type === 'screenshare-started' ? message.streamId : null);
      case 'settings':
        settings = message.settings;
        if (!settings.screenshare) screenShare.stop(false);
        render();
        return;
      case 'participant-waiting':
        return waitingList.add(message.peer);
      case 'waiting-ended':
        return waitingList.remove(message.peerId);
      case 'error':
        stage.say(errorText(message.code));
        return;
    }
  }

  function openPanel(next: 'chat' | 'devices' | null) {
    panel = next;
    if (panel === 'chat') {
      unread = 0;
      controls.setUnread(0);
    }
    if (panel === 'devices' && localMedia) void devicesPanel.refresh(localMedia.current());
    render();
    if (panel === 'chat') document.getElementById('chat-input')?.focus();
  }

  async function removePeer(peerId: string, name: string) {
    const reply = await signaling.request({ type: 'remove', peerId });
    if (reply.type === 'error') return stage.say(errorText(reply.code));
    peers.remove(peerId);
    stage.say(t('host.removed', { name: name }));
  }

  /** What the others are told of this participant's media; nobody is told while it waits. */
  function announceMedia() {
    if (!waiting) signaling.send({ type: 'media-state', audio: audioOn, video: videoOn });
  }

  function toggleAudio() {
    audioOn = !audioOn;
    for (const t of stream?.getAudioTracks() ?? []) t.enabled = audioOn;
    announceMedia();
    render();
  }

  function toggleVideo() {
    videoOn = !videoOn;
    for (const t of stream?.getVideoTracks() ?? []) t.enabled = videoOn;
    self?.setCameraOff(!videoOn);
    announceMedia();
    render();
  }

  async function invite() {
    controls.setInviteBusy(true);
    const reply = await signaling.request({ type: 'invite-create' });
    controls.setInviteBusy(false);
    if (reply.type !== 'invite-created') {
      stage.say(reply.type === 'error' ? errorText(reply.code) : t('invite.failed'));
      return;
    }
    invitePanel.show(reply.url);
    render();
    invitePanel.focus();
  }

  async function leave() {
    controls.setLeaving();
    network.flush();
    await signaling.request({ type: 'leave' }, 3000);
    finish('left');
  }

  function finish(kind: EndKind, message?: string, code?: string) {
    if (ended) return;
    ended = true;
    // What follows the call replaces the join screen itself: the call's screen must not come after it.
    clearTimeout(showTimer);
    signaling.close();
    mesh.close();
    stopQuality();
    network.stop();
    mediaWatch.stop();
    health.stop();
    document.removeEventListener('fullscreenchange', render);
    window.removeEventListener('online', onNetworkChange);
    window.removeEventListener('offline', onNetworkChange);
    networkInfo?.removeEventListener('change', onNetworkChange);
    screenShare.stop(false);
    if (stream) stopStream(stream);
    self?.stop();
    peers.stopMeters();
    waitingList.stop();
    // Kept when turned away: a reload sends the token again and is refused as itself, not let in as someone new.
    if (kind !== 'replaced' && kind !== 'denied' && kind !== 'removed') connection?.forget();
    options.onEnd({ kind, joined: connection?.joined() ?? null, returnUrl: connection?.returnUrl() ?? null, ...(message ? { message } : {}), ...(code ? { code } : {}) });
  }

  function showScreen() {
    clearTimeout(showTimer);
    self?.takePreview();
    stage.show();
  }
}

// The call: puts together the screen (in-call/stage.ts and the tiles), the
// controls, chat, invites and screen sharing as the room's settings allow
// (and as they change), the peer connections (mesh.ts) and staying in the
// call across dropped connections (in-call/reconnection.ts), down to the
// way out: leave, ejection when the room closes, being opened elsewhere.
import type { RoomSettings, ServerMessage } from '../../src/realtime/protocol.js';
import { createChat } from './in-call/chat.js';
import { createConnectionHealth } from './in-call/connection-health.js';
import { createControls } from './in-call/controls.js';
import { createInvitePanel } from './in-call/invite-panel.js';
import { createLocalTile } from './in-call/local-tile.js';
import { watchMediaFlow } from './in-call/media-watch.js';
import { watchQuality } from './in-call/quality.js';
import { connectCall, type Joined } from './in-call/reconnection.js';
import { createRemotePeers } from './in-call/remote-peers.js';
import { createScreenShare } from './in-call/screen-share.js';
import { createStage } from './in-call/stage.js';
import { text } from './in-call/strings.js';
import { stopStream } from './media.js';
import { Mesh } from './mesh.js';

type EndKind = 'left' | 'closed' | 'deleted' | 'replaced' | 'refused';

export interface CallOptions {
  root: Element;
  joinToken: string;
  roomName: string;
  name: string;
  stream: MediaStream;
  /** A signaling connection opened ahead (warmSocket), if one is usable. */
  socket: WebSocket | null;
  /** The call is over for this participant: what to show next. */
  onEnd(end: { kind: EndKind; joined: Joined | null; message?: string; code?: string }): void;
}

export function startCall(options: CallOptions): void {
  const { stream } = options;
  let settings: RoomSettings = { chat: false, screenshare: false, invites: false, audioIndicator: false };
  let ended = false;
  let audioOn = stream.getAudioTracks().length > 0;
  let videoOn = stream.getVideoTracks().length > 0;

  const stage = createStage(options.root, options.roomName);
  const self = createLocalTile(stage, options.name, stream);
  const controls = createControls({
    toggleAudio,
    toggleVideo,
    toggleScreen: () => void screenShare.toggle(),
    invite: () => void invite(),
    leave: () => void leave(),
  });
  const invitePanel = createInvitePanel(stage.say);
  const chat = createChat(async (message, messageId) => {
    const reply = await signaling.request({ type: 'chat', text: message, messageId });
    // Not sent for want of a path between the nodes: the line itself says so and offers Retry; other refusals say why.
    if (reply.type === 'error' && reply.code !== 'unavailable') stage.say(reply.message);
    return reply.type === 'ack';
  });

  const connection = connectCall({
    joinToken: options.joinToken,
    displayName: options.name,
    socket: options.socket,
    onDown: () => health.lost(),
    onJoinDelayed: () => stage.say(text.joinDelayed),
    onDoubt: (inDoubt) => health.doubt(inDoubt),
    onJoined,
    onMessage: (message) => void onMessage(message),
    onEnd: finish,
  });
  const { signaling } = connection;

  const mesh = new Mesh('', {}, {
    send: (to, data) => signaling.send({ type: 'signal', to, data }),
    onTrack: (peerId, track, from) => peers.track(peerId, track, from),
    onState: (peerId, state) => {
      if (state === 'connected') health.peerFlowing(peerId);
      if (state === 'disconnected' || state === 'failed') health.peerLost(peerId);
    },
  });
  mesh.addTracks(stream);

  const peers = createRemotePeers({
    addTile: stage.addTile,
    showsMeters: () => settings.audioIndicator,
    onRemove: (peerId) => mesh.remove(peerId),
  });

  const health = createConnectionHealth({
    setBanner: stage.setReconnecting,
    say: stage.say,
    peers,
    connections: () => mesh.byPeer(),
    signalingHealthy: () => signaling.healthy,
    probe: () => signaling.probe(),
  });
  const stopQuality = watchQuality(() => mesh.byPeer(), health.quality);
  const mediaWatch = watchMediaFlow(() => mesh.byPeer(), {
    // Is it us? The server answers at once if our own connection is fine.
    onStall: () => signaling.probe(),
    onLost: health.peerLost,
    onFlow: health.peerFlowing,
  });

  // Where the browser tells of network changes, they are hints to check the connection now.
  const onNetworkChange = () => signaling.probe();
  const networkInfo = (navigator as Navigator & { connection?: EventTarget }).connection;
  window.addEventListener('online', onNetworkChange);
  window.addEventListener('offline', onNetworkChange);
  networkInfo?.addEventListener('change', onNetworkChange);

  const screenShare = createScreenShare({
    request: (message) => signaling.request(message),
    tellStopped: () => signaling.send({ type: 'screenshare-stop' }),
    mesh,
    say: stage.say,
    onSharing: controls.setSharing,
  });

  function render() {
    const canShare = settings.screenshare && typeof navigator.mediaDevices?.getDisplayMedia === 'function';
    const canInvite = settings.invites && connection.joined()?.self.role === 'host';
    stage.showControls(
      ...controls.render({
        audioOn,
        videoOn,
        hasAudio: stream.getAudioTracks().length > 0,
        hasVideo: stream.getVideoTracks().length > 0,
        canShare,
        canInvite,
      }),
    );
    stage.showSide(...(canInvite && invitePanel.hasLink() ? [invitePanel.panel] : []), ...(settings.chat ? [chat.panel] : []));
    self.showMeter(settings.audioIndicator);
    peers.showMeters(settings.audioIndicator);
  }

  async function onJoined(joined: Joined) {
    settings = joined.settings;
    stage.say(joined.resumed ? text.reconnected : '');
    self.setName(joined.self.name);
    const rtcConfig: RTCConfiguration = { iceServers: joined.iceServers as RTCIceServer[], iceTransportPolicy: joined.iceTransportPolicy };
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
      // The newcomer calls everyone already there; they answer.
      for (const info of joined.peers) {
        peers.add(info);
        mesh.add(info.id, true);
      }
    }
    health.rejoined();
    signaling.send({ type: 'media-state', audio: audioOn, video: videoOn });
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
      case 'chat':
        return chat.append(message);
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
      case 'error':
        stage.say(message.message);
        return;
    }
  }

  function toggleAudio() {
    audioOn = !audioOn;
    for (const t of stream.getAudioTracks()) t.enabled = audioOn;
    signaling.send({ type: 'media-state', audio: audioOn, video: videoOn });
    render();
  }

  function toggleVideo() {
    videoOn = !videoOn;
    for (const t of stream.getVideoTracks()) t.enabled = videoOn;
    self.setCameraOff(!videoOn);
    signaling.send({ type: 'media-state', audio: audioOn, video: videoOn });
    render();
  }

  async function invite() {
    controls.setInviteBusy(true);
    const reply = await signaling.request({ type: 'invite-create' });
    controls.setInviteBusy(false);
    if (reply.type !== 'invite-created') {
      stage.say(reply.type === 'error' ? reply.message : text.inviteFailed);
      return;
    }
    invitePanel.show(reply.url);
    render();
    invitePanel.focus();
  }

  async function leave() {
    controls.setLeaving();
    await signaling.request({ type: 'leave' }, 3000);
    finish('left');
  }

  function finish(kind: EndKind, message?: string, code?: string) {
    if (ended) return;
    ended = true;
    signaling.close();
    mesh.close();
    stopQuality();
    mediaWatch.stop();
    health.stop();
    window.removeEventListener('online', onNetworkChange);
    window.removeEventListener('offline', onNetworkChange);
    networkInfo?.removeEventListener('change', onNetworkChange);
    screenShare.stop(false);
    stopStream(stream);
    self.stop();
    peers.stopMeters();
    if (kind !== 'replaced') connection.forget();
    options.onEnd({ kind, joined: connection.joined(), ...(message ? { message } : {}), ...(code ? { code } : {}) });
  }

  render();
  signaling.connect(options.socket);
}

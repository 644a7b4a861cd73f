// The call: tiles with names, own controls, chat / screen sharing / invites /
// audio indicators as the room's settings allow (and as they change), and
// the way out: leave, ejection when the room closes, reconnecting after a drop.
import type { PeerInfo, RoomSettings, ServerMessage } from '../../src/realtime/protocol.js';
import { h, show } from './dom.js';
import { bindMeter } from './meter.js';
import { stopStream } from './media.js';
import { Mesh } from './mesh.js';
import { Signaling, signalingUrl } from './signaling.js';

type Joined = Extract<ServerMessage, { type: 'joined' }>;

export interface CallOptions {
  root: Element;
  joinToken: string;
  roomName: string;
  name: string;
  stream: MediaStream;
  /** A signaling connection opened ahead (warmSocket), if one is usable. */
  socket: WebSocket | null;
  /** The call is over for this participant: what to show next. */
  onEnd(end: { kind: 'left' | 'closed' | 'deleted' | 'replaced' | 'refused'; joined: Joined | null; message?: string; code?: string }): void;
}

interface RemotePeer {
  info: PeerInfo;
  tile: HTMLElement;
  video: HTMLVideoElement;
  caption: HTMLElement;
  meter: HTMLMeterElement;
  unbindMeter: () => void;
  screenId: string | null;
  screens: Map<string, HTMLElement>;
  /** Every stream received from this peer: its camera, and a screen while it shares. */
  streams: Map<string, MediaStream>;
}

const storageKey = (joinToken: string) => `parley:participant:${joinToken}`;

export function startCall(options: CallOptions): void {
  const { root, joinToken, stream } = options;
  let joined: Joined | null = null;
  let settings: RoomSettings = { chat: false, screenshare: false, invites: false, audioIndicator: false };
  let ended = false;
  let closedReason: 'closed' | 'deleted' | null = null;
  let screen: MediaStream | null = null;
  let audioOn = stream.getAudioTracks().length > 0;
  let videoOn = stream.getVideoTracks().length > 0;
  const peers = new Map<string, RemotePeer>();
  const unbinders: (() => void)[] = [];

  // ---- DOM ----
  const status = h('p', { class: 'notice', role: 'status', 'aria-live': 'polite' });
  const tiles = h('div', { class: 'tiles' });
  const localVideo = h('video', { 'data-testid': 'local-video', autoplay: true, muted: true, playsinline: true, 'aria-label': 'Your camera' });
  localVideo.muted = true;
  localVideo.srcObject = stream;
  const localMeter = h('meter', { 'data-testid': 'call-audio-indicator', min: 0, max: 1, value: 0, 'aria-label': 'Your microphone level' });
  const localCaption = h('figcaption', {}, `${options.name} (you)`);
  const localTile = h('figure', { class: 'tile self' }, localVideo, localCaption, localMeter);
  tiles.append(localTile);
  unbinders.push(bindMeter(localMeter, stream));

  const muteButton = h('button', { type: 'button', 'data-testid': 'mute-button', onclick: () => toggleAudio() });
  const cameraButton = h('button', { type: 'button', 'data-testid': 'camera-button', onclick: () => toggleVideo() });
  const screenButton = h('button', { type: 'button', 'data-testid': 'screenshare-button', 'aria-pressed': 'false', onclick: () => void toggleScreen() }, 'Share screen');
  const inviteButton = h('button', { type: 'button', 'data-testid': 'invite-button', onclick: () => void invite() }, 'Invite');
  const leaveButton = h('button', { type: 'button', class: 'danger', 'data-testid': 'leave-button', onclick: () => void leave() }, 'Leave');
  const controls = h('div', { class: 'controls', role: 'toolbar', 'aria-label': 'Call controls' });
  const invitePanel = h('div', { class: 'invite' });

  const chatList = h('ol', { class: 'chat-list', 'aria-live': 'polite', 'aria-label': 'Chat messages' });
  const chatInput = h('input', { id: 'chat-input', 'data-testid': 'chat-input', type: 'text', maxlength: 2000, autocomplete: 'off' });
  const chatPanel = h(
    'section',
    { class: 'chat', 'aria-labelledby': 'chat-title' },
    h('h2', { id: 'chat-title' }, 'Chat'),
    chatList,
    h(
      'form',
      { class: 'chat-form', onsubmit: (e) => void sendChat(e) },
      h('label', { for: 'chat-input', class: 'visually-hidden' }, 'Message'),
      chatInput,
      h('button', { type: 'submit', 'data-testid': 'chat-send' }, 'Send'),
    ),
  );
  const side = h('div', { class: 'side' });

  show(
    root,
    h(
      'div',
      { class: 'call' },
      h('header', { class: 'call-header' }, h('h1', { class: 'room-name' }, options.roomName), status),
      h('div', { class: 'stage' }, tiles, side),
      controls,
    ),
  );

  function renderControls() {
    muteButton.textContent = audioOn ? 'Mute' : 'Unmute';
    muteButton.setAttribute('aria-pressed', String(!audioOn));
    muteButton.disabled = stream.getAudioTracks().length === 0;
    cameraButton.textContent = videoOn ? 'Camera off' : 'Camera on';
    cameraButton.setAttribute('aria-pressed', String(!videoOn));
    cameraButton.disabled = stream.getVideoTracks().length === 0;
    const canShare = settings.screenshare && typeof navigator.mediaDevices?.getDisplayMedia === 'function';
    const canInvite = settings.invites && joined?.self.role === 'host';
    controls.replaceChildren(muteButton, cameraButton, ...(canShare ? [screenButton] : []), ...(canInvite ? [inviteButton] : []), leaveButton);
    side.replaceChildren(...(canInvite && invitePanel.childElementCount ? [invitePanel] : []), ...(settings.chat ? [chatPanel] : []));
    localMeter.hidden = !settings.audioIndicator;
    if (!settings.audioIndicator) localMeter.remove();
    else if (!localMeter.isConnected) localTile.append(localMeter);
    for (const peer of peers.values()) {
      if (!settings.audioIndicator) peer.meter.remove();
      else if (!peer.meter.isConnected) peer.tile.append(peer.meter);
    }
  }

  // ---- peers and media ----
  const signaling = new Signaling(signalingUrl(), {
    onOpen: () => void join(),
    onDown: () => {
      status.textContent = 'Connection lost. Reconnecting\u2026';
    },
    onFinalClose: (code) => {
      if (code === 4001) return finish(closedReason === 'deleted' ? 'deleted' : 'closed');
      if (code === 4002) return finish('replaced');
    },
    onMessage: (message) => void onMessage(message),
  });

  const mesh = new Mesh('', {}, {
    send: (to, data) => signaling.send({ type: 'signal', to, data }),
    onTrack: (peerId, track, from) => onTrack(peerId, track, from),
    onState: () => {},
  });
  mesh.addTracks(stream);

  function addPeer(info: PeerInfo): RemotePeer {
    removePeer(info.id);
    const video = h('video', { 'data-testid': 'remote-video', autoplay: true, playsinline: true, 'aria-label': `Video of ${info.name}` });
    const caption = h('figcaption', {}, info.name);
    const meter = h('meter', { 'data-testid': 'call-audio-indicator', min: 0, max: 1, value: 0, 'aria-label': `Microphone level of ${info.name}` });
    const tile = h('figure', { class: 'tile' }, video, caption);
    if (settings.audioIndicator) tile.append(meter);
    tiles.append(tile);
    const peer: RemotePeer = { info, tile, video, caption, meter, unbindMeter: () => {}, screenId: null, screens: new Map(), streams: new Map() };
    peers.set(info.id, peer);
    return peer;
  }

  function removePeer(id: string) {
    const peer = peers.get(id);
    mesh.remove(id);
    if (!peer) return;
    peer.unbindMeter();
    peer.tile.remove();
    for (const tile of peer.screens.values()) tile.remove();
    peers.delete(id);
  }

  function onTrack(peerId: string, track: MediaStreamTrack, from: MediaStream) {
    const peer = peers.get(peerId) ?? addPeer({ id: peerId, name: 'Participant', role: 'guest' });
    peer.streams.set(from.id, from);
    placeStreams(peer);
    if (track.kind === 'audio') {
      peer.unbindMeter();
      peer.unbindMeter = bindMeter(peer.meter, new MediaStream([track]));
    }
  }

  /**
   * The stream announced as a screen goes to a screen tile, any other to the
   * camera tile. Tracks and announcements may arrive in either order.
   */
  function placeStreams(peer: RemotePeer) {
    for (const [id, tile] of peer.screens) {
      if (id !== peer.screenId) {
        tile.remove();
        peer.screens.delete(id);
        peer.streams.delete(id);
      }
    }
    for (const [id, stream] of peer.streams) {
      if (id !== peer.screenId) {
        if (peer.video.srcObject !== stream) peer.video.srcObject = stream;
        continue;
      }
      if (peer.screens.has(id)) continue;
      if (peer.video.srcObject === stream) peer.video.srcObject = null;
      const video = h('video', { 'data-testid': 'remote-screen', autoplay: true, playsinline: true, muted: true, 'aria-label': `Screen of ${peer.info.name}` });
      video.muted = true;
      video.srcObject = stream;
      const tile = h('figure', { class: 'tile screen' }, video, h('figcaption', {}, `Screen of ${peer.info.name}`));
      peer.screens.set(id, tile);
      tiles.append(tile);
    }
  }

  async function join() {
    const reply = await signaling.request({
      type: 'join',
      joinToken,
      displayName: options.name,
      ...((joined?.participantToken ?? sessionStorage.getItem(storageKey(joinToken))) ? { participantToken: joined?.participantToken ?? sessionStorage.getItem(storageKey(joinToken))! } : {}),
    });
    if (reply.type !== 'joined') {
      if (reply.type === 'error' && reply.code === 'unavailable') return; // the socket dropped again: the next open retries
      signaling.close();
      return finish('refused', reply.type === 'error' ? reply.message : 'Could not join', reply.type === 'error' ? reply.code : undefined);
    }
    joined = reply;
    sessionStorage.setItem(storageKey(joinToken), reply.participantToken);
    settings = reply.settings;
    status.textContent = reply.resumed ? 'Reconnected.' : '';
    localCaption.textContent = `${reply.self.name} (you)`;
    for (const id of [...peers.keys()]) removePeer(id);
    mesh.reset(reply.self.id, { iceServers: reply.iceServers as RTCIceServer[], iceTransportPolicy: reply.iceTransportPolicy });
    // The newcomer calls everyone already there; they answer.
    for (const info of reply.peers) {
      addPeer(info);
      mesh.add(info.id, true);
    }
    signaling.send({ type: 'media-state', audio: audioOn, video: videoOn });
    if (screen) await announceScreen(screen);
    renderControls();
  }

  async function onMessage(message: ServerMessage) {
    switch (message.type) {
      case 'peer-joined':
        addPeer(message.peer);
        // The newcomer missed the announcement of a share in progress.
        if (screen) await announceScreen(screen);
        return;
      case 'peer-left':
        removePeer(message.peerId);
        return;
      case 'signal':
        return mesh.signal(message.from, message.data);
      case 'chat':
        return appendChat(message.name, message.text);
      case 'media-state': {
        const peer = peers.get(message.from);
        if (!peer) return;
        peer.tile.classList.toggle('camera-off', !message.video);
        peer.caption.textContent = `${peer.info.name}${message.audio ? '' : ' (muted)'}`;
        return;
      }
      case 'screenshare-started':
      case 'screenshare-stopped': {
        const peer = peers.get(message.from);
        if (!peer) return;
        peer.screenId = message.type === 'screenshare-started' ? message.streamId : null;
        placeStreams(peer);
        return;
      }
      case 'settings':
        settings = message.settings;
        if (!settings.screenshare && screen) stopScreen(false);
        renderControls();
        return;
      case 'room-closed':
        closedReason = message.reason;
        return;
      case 'error':
        status.textContent = message.message;
        return;
    }
  }

  // ---- controls ----
  function toggleAudio() {
    audioOn = !audioOn;
    for (const t of stream.getAudioTracks()) t.enabled = audioOn;
    signaling.send({ type: 'media-state', audio: audioOn, video: videoOn });
    renderControls();
  }

  function toggleVideo() {
    videoOn = !videoOn;
    for (const t of stream.getVideoTracks()) t.enabled = videoOn;
    localTile.classList.toggle('camera-off', !videoOn);
    signaling.send({ type: 'media-state', audio: audioOn, video: videoOn });
    renderControls();
  }

  async function announceScreen(shared: MediaStream): Promise<boolean> {
    const reply = await signaling.request({ type: 'screenshare-start', streamId: shared.id });
    if (reply.type !== 'ack') {
      status.textContent = reply.type === 'error' ? reply.message : 'Screen sharing is not possible now';
      stopScreen(false);
      return false;
    }
    return true;
  }

  async function toggleScreen() {
    if (screen) return stopScreen(true);
    let shared: MediaStream;
    try {
      shared = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
    } catch {
      status.textContent = 'Screen sharing was cancelled or is not allowed.';
      return;
    }
    screen = shared;
    // Announced before the tracks flow, so that the others know this stream is a screen.
    if (!(await announceScreen(shared))) return;
    mesh.addTracks(shared);
    shared.getVideoTracks()[0]?.addEventListener('ended', () => stopScreen(true));
    screenButton.textContent = 'Stop sharing';
    screenButton.setAttribute('aria-pressed', 'true');
  }

  function stopScreen(tell: boolean) {
    if (!screen) return;
    mesh.removeTracks(screen);
    stopStream(screen);
    screen = null;
    if (tell) signaling.send({ type: 'screenshare-stop' });
    screenButton.textContent = 'Share screen';
    screenButton.setAttribute('aria-pressed', 'false');
  }

  async function invite() {
    inviteButton.disabled = true;
    const reply = await signaling.request({ type: 'invite-create' });
    inviteButton.disabled = false;
    if (reply.type !== 'invite-created') {
      status.textContent = reply.type === 'error' ? reply.message : 'Could not create an invite';
      return;
    }
    const link = h('input', { id: 'invite-link', 'data-testid': 'invite-link', type: 'text', readonly: true, value: reply.url });
    const copy = h('button', {
      type: 'button',
      onclick: () => {
        link.select();
        void navigator.clipboard?.writeText(reply.url).then(
          () => (status.textContent = 'Invite link copied.'),
          () => (status.textContent = 'Select the link and copy it.'),
        );
      },
    }, 'Copy');
    invitePanel.replaceChildren(h('label', { for: 'invite-link' }, 'Invite link (works once per person you send it to)'), h('div', { class: 'row' }, link, copy));
    renderControls();
    link.focus();
    link.select();
  }

  async function sendChat(event: Event) {
    event.preventDefault();
    const text = chatInput.value.trim();
    if (!text) return;
    const reply = await signaling.request({ type: 'chat', text });
    if (reply.type === 'ack') {
      appendChat('You', text);
      chatInput.value = '';
    } else if (reply.type === 'error') {
      status.textContent = reply.message;
    }
  }

  function appendChat(name: string, text: string) {
    chatList.append(h('li', { 'data-testid': 'chat-message' }, h('strong', {}, `${name}: `), text));
    chatList.scrollTop = chatList.scrollHeight;
  }

  async function leave() {
    leaveButton.disabled = true;
    await signaling.request({ type: 'leave' }, 3000);
    finish('left');
  }

  function finish(kind: 'left' | 'closed' | 'deleted' | 'replaced' | 'refused', message?: string, code?: string) {
    if (ended) return;
    ended = true;
    signaling.close();
    mesh.close();
    stopScreen(false);
    stopStream(stream);
    for (const unbind of unbinders) unbind();
    for (const peer of peers.values()) peer.unbindMeter();
    if (kind !== 'replaced') sessionStorage.removeItem(storageKey(joinToken));
    options.onEnd({ kind, joined, ...(message ? { message } : {}), ...(code ? { code } : {}) });
  }

  renderControls();
  signaling.connect(options.socket);
}

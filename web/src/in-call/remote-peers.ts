// The other participants' tiles: one each (camera, name, level meter), a
// screen tile while one shares, and which received stream is which. Media
// comes in through track(); who is in the call and the peer connections to
// them are participants.ts's.
import type { PeerInfo } from '../../../src/shared/protocol.js';
import { h } from '../dom.js';
import { bindMeter } from '../meter.js';
import type { Quality } from './quality.js';
import { t } from '../i18n.js';

interface RemotePeer {
  info: PeerInfo;
  tile: HTMLElement;
  video: HTMLVideoElement;
  /** The name in the caption (with "(muted)" while muted). */
  caption: HTMLElement;
  meter: HTMLMeterElement;
  /** Three bars and an accessible name: how good the connection to this peer is. */
  quality: HTMLElement;
  /** Said on the tile while this peer's connection is lost or poor. */
  notice: HTMLElement;
  lost: boolean;
  unbindMeter: () => void;
  screenId: string | null;
  screens: Map<string, HTMLElement>;
  /** Every stream received from this peer: its camera, and a screen while it shares. */
  streams: Map<string, MediaStream>;
  /** What the camera tile plays: the tracks of the camera stream shown (showCamera). */
  shown: MediaStream;
}

export interface RemotePeersOptions {
  addTile(tile: HTMLElement): void;
  /** Whether the room shows level meters now. */
  showsMeters(): boolean;
  /** A peer is gone (or replaced): its connection goes too. */
  onRemove(peerId: string): void;
  /** Whether this page may remove the peer from the call (a host, and the peer a guest). */
  canRemove(info: PeerInfo): boolean;
  /** The host asked to remove the peer. */
  requestRemove(info: PeerInfo): void;
}

export interface RemotePeers {
  add(info: PeerInfo): void;
  has(peerId: string): boolean;
  remove(peerId: string): void;
  removeAll(): void;
  /** Removes every peer not listed. */
  keepOnly(peerIds: string[]): void;
  /** A track arrived from a peer (one with a tile), as part of the stream `from`. */
  track(peerId: string, track: MediaStreamTrack, from: MediaStream): void;
  mediaState(peerId: string, audio: boolean, video: boolean): void;
  /** The connection to this peer was lost (its own drop, or ours to it), or is back. */
  connectionLost(peerId: string, lost: boolean): void;
  quality(peerId: string, quality: Quality): void;
  /** The peer started sharing the stream `streamId` as a screen, or stopped (null). */
  screen(peerId: string, streamId: string | null): void;
  showMeters(on: boolean): void;
  stopMeters(): void;
  /** Plays everyone's sound through this output device (where the browser allows). */
  setSpeaker(deviceId: string): void;
}

/** "Connection to Dr Lee: fair, round trip 320 ms, 2% loss", in the page's language. */
function qualityLabel(name: string, quality: Quality): string {
  const parts = [t(`quality.${quality.level}`, { name })];
  if (quality.rttMs !== null) parts.push(t('quality.roundTrip', { ms: quality.rttMs }));
  if (quality.loss !== null) parts.push(t('quality.loss', { percent: Math.round(quality.loss * 100) }));
  return parts.join(', ');
}

/**
 * Shows `stream` in the peer's camera tile, whose <video> plays a stream of
 * its own: the tracks change in it, not the element's srcObject, which would
 * start the element over (a blank frame or two when the peer's media moves
 * to the SFU path, or comes on a connection made again).
 */
function showCamera(peer: RemotePeer, stream: MediaStream): void {
  const { shown } = peer;
  const next = stream.getTracks();
  for (const track of shown.getTracks()) if (!next.includes(track)) shown.removeTrack(track);
  for (const track of next) if (!shown.getTracks().includes(track)) shown.addTrack(track);
  if (peer.video.srcObject !== shown) peer.video.srcObject = shown;
}

/** A peer's tile: its camera, name, connection quality, the notice said on it, and for a host the way to remove a guest. */
function peerTile(info: PeerInfo, options: Pick<RemotePeersOptions, 'canRemove' | 'requestRemove'>): RemotePeer {
  const video = h('video', { 'data-testid': 'remote-video', autoplay: true, playsinline: true, 'aria-label': t('call.videoOf', { name: info.name }) });
  const caption = h('span', { class: 'name' }, info.name);
  const meter = h('meter', { 'data-testid': 'call-audio-indicator', min: 0, max: 1, value: 0, 'aria-label': t('call.microphoneLevelOf', { name: info.name }) });
  const quality = h(
    'span',
    { class: 'quality', 'data-testid': 'connection-quality', 'data-level': 'unknown', role: 'img', 'aria-label': t('quality.unknown', { name: info.name }) },
    h('span'),
    h('span'),
    h('span'),
  );
  const notice = h('p', { class: 'tile-notice', 'data-testid': 'peer-notice', role: 'status', hidden: true });
  // The caption row: the name, how good the connection is, and for a host the way to remove a guest.
  const removeButton = options.canRemove(info)
    ? h('button', {
        type: 'button',
        class: 'tile-remove',
        'data-testid': 'remove-button',
        // Its label is drawn by CSS from data-label, so that the tile's text stays the name.
        'data-label': t('host.remove'),
        'aria-label': t('host.removeName', { name: info.name }),
        onclick: () => options.requestRemove(info),
      })
    : null;
  const tile = h('figure', { class: 'tile' }, video, notice, h('figcaption', {}, caption, quality, removeButton));
  return {
    info,
    tile,
    video,
    caption,
    meter,
    quality,
    notice,
    lost: false,
    unbindMeter: () => {},
    screenId: null,
    screens: new Map(),
    streams: new Map(),
    shown: new MediaStream(),
  };
}

export function createRemotePeers(options: RemotePeersOptions): RemotePeers {
  const peers = new Map<string, RemotePeer>();
  let speaker: string | null = null;
  const route = (video: HTMLVideoElement) => {
    const sink = video as HTMLVideoElement & { setSinkId?: (id: string) => Promise<void> };
    if (speaker !== null) void sink.setSinkId?.(speaker).catch(() => {});
  };

  function add(info: PeerInfo) {
    remove(info.id);
    const peer = peerTile(info, options);
    route(peer.video);
    if (options.showsMeters()) peer.tile.append(peer.meter);
    options.addTile(peer.tile);
    peers.set(info.id, peer);
  }

  function remove(peerId: string) {
    const peer = peers.get(peerId);
    options.onRemove(peerId);
    if (!peer) return;
    peer.unbindMeter();
    peer.tile.remove();
    for (const tile of peer.screens.values()) tile.remove();
    peers.delete(peerId);
  }

  /**
   * The stream announced as a screen goes to a screen tile, the newest other
   * one to the camera tile (the one of a connection made again, of the SFU
   * path once the peer moved to it), set once: setting a <video>'s srcObject
   * again starts it over, a flicker. Tracks and announcements may arrive in
   * either order.
   */
  function placeStreams(peer: RemotePeer) {
    for (const [id, tile] of peer.screens) {
      if (id !== peer.screenId) {
        tile.remove();
        peer.screens.delete(id);
        peer.streams.delete(id);
      }
    }
    let camera: MediaStream | null = null;
    for (const [id, stream] of peer.streams) {
      if (id !== peer.screenId) {
        camera = stream;
        continue;
      }
      if (peer.screens.has(id)) continue;
      const video = h('video', { 'data-testid': 'remote-screen', autoplay: true, playsinline: true, muted: true, 'aria-label': t('call.screenOf', { name: peer.info.name }) });
      video.muted = true;
      video.srcObject = stream;
      const tile = h('figure', { class: 'tile screen' }, video, h('figcaption', {}, t('call.screenOf', { name: peer.info.name })));
      peer.screens.set(id, tile);
      options.addTile(tile);
    }
    if (camera) showCamera(peer, camera);
  }

  return {
    add,
    has: (peerId) => peers.has(peerId),
    remove,
    removeAll: () => {
      for (const id of [...peers.keys()]) remove(id);
    },
    keepOnly: (peerIds) => {
      for (const id of [...peers.keys()]) if (!peerIds.includes(id)) remove(id);
    },
    track: (peerId, track, from) => {
      const peer = peers.get(peerId);
      if (!peer) return;
      // A stream of a new connection under a known id (the peer's own stream's, peer to peer) is the newest.
      if (peer.streams.get(from.id) !== from) peer.streams.delete(from.id);
      peer.streams.set(from.id, from);
      placeStreams(peer);
      if (track.kind === 'audio') {
        peer.unbindMeter();
        peer.unbindMeter = bindMeter(peer.meter, new MediaStream([track]));
      }
    },
    mediaState: (peerId, audio, video) => {
      const peer = peers.get(peerId);
      if (!peer) return;
      peer.tile.classList.toggle('camera-off', !video);
      peer.caption.textContent = audio ? peer.info.name : t('call.muted', { name: peer.info.name });
    },
    connectionLost: (peerId, lost) => {
      const peer = peers.get(peerId);
      if (!peer || peer.lost === lost) return;
      peer.lost = lost;
      peer.tile.classList.toggle('lost', lost);
      peer.notice.hidden = !lost;
      peer.notice.textContent = lost ? t('connection.peerReconnecting', { name: peer.info.name }) : '';
      if (lost) {
        peer.quality.dataset.level = 'lost';
        peer.quality.setAttribute('aria-label', t('quality.lost', { name: peer.info.name }));
      }
    },
    quality: (peerId, quality) => {
      const peer = peers.get(peerId);
      if (!peer || peer.lost) return;
      peer.quality.dataset.level = quality.level;
      const label = qualityLabel(peer.info.name, quality);
      peer.quality.setAttribute('aria-label', label);
      peer.quality.title = label;
      peer.notice.hidden = quality.level !== 'poor';
      peer.notice.textContent = quality.level === 'poor' ? t('connection.peerPoor', { name: peer.info.name }) : '';
    },
    screen: (peerId, streamId) => {
      const peer = peers.get(peerId);
      if (!peer) return;
      peer.screenId = streamId;
      placeStreams(peer);
    },
    showMeters: (on) => {
      for (const peer of peers.values()) {
        if (!on) peer.meter.remove();
        else if (!peer.meter.isConnected) peer.tile.append(peer.meter);
      }
    },
    stopMeters: () => {
      for (const peer of peers.values()) peer.unbindMeter();
    },
    setSpeaker: (deviceId) => {
      speaker = deviceId;
      for (const peer of peers.values()) route(peer.video);
    },
  };
}

// The call's second media path (docs/design.md, "Group calls through an
// SFU"): one publication of this page's camera and microphone (simulcast), and
// one subscription carrying everyone else's media, both negotiated with the
// room's Janus through Parley's signaling (docs/signaling.md, "Group calls
// through an SFU"). Janus offers the subscription, the page answers; each
// received track goes to its participant's tile through onTrack, as the
// mesh's do. Which layer each received video comes in follows its tile.
import type { ServerMessage, SfuStream } from '../../../src/shared/protocol.js';
import type { Signaling } from '../signaling.js';
import { CAMERA_ENCODINGS, layerFor, type Substream } from './layers.js';

/** How often the received videos' layers are checked against their tiles' sizes (the layout changes with people and panels). */
const LAYERS_EVERY_MS = 2000;
/** A publication or subscription Janus could not take (it is starting again, the room is moving) is tried again this often. */
const RETRY_EVERY_MS = 1000;

export interface SfuCallOptions {
  signaling: Pick<Signaling, 'send' | 'request'>;
  rtcConfig(): RTCConfiguration;
  /** The camera and microphone this page sends. */
  stream(): MediaStream | null;
  onTrack(peerId: string, track: MediaStreamTrack, from: MediaStream): void;
}

export interface SfuCall {
  readonly active: boolean;
  start(): Promise<void>;
  stop(): void;
  /** Messages of the SFU (an updated subscription, a restart); others are ignored. */
  handle(message: ServerMessage): Promise<void>;
  /** The publication and the subscription, for stats (upload, quality). */
  connections(): RTCPeerConnection[];
}

/** Candidates of a connection whose handle at the SFU may not exist yet: sent once the answer came. */
function trickled(pc: RTCPeerConnection, send: (candidate: RTCIceCandidateInit | null) => void) {
  let ready = false;
  const pending: (RTCIceCandidateInit | null)[] = [];
  pc.onicecandidate = (event) => {
    const candidate = event.candidate ? event.candidate.toJSON() : null;
    if (ready) send(candidate);
    else pending.push(candidate);
  };
  return () => {
    ready = true;
    for (const candidate of pending.splice(0)) send(candidate);
  };
}

export function createSfuCall(options: SfuCallOptions): SfuCall {
  const { signaling } = options;
  let active = false;
  let publisher: RTCPeerConnection | null = null;
  let subscriber: RTCPeerConnection | null = null;
  let streams = new Map<string, SfuStream>();
  /** One stream per participant and publication, as the mesh delivers a peer's camera. */
  const remote = new Map<string, MediaStream>();
  const layers = new Map<string, Substream>();
  let layerTimer: ReturnType<typeof setInterval> | null = null;

  async function publish(): Promise<void> {
    const local = options.stream();
    const pc = new RTCPeerConnection(options.rtcConfig());
    publisher = pc;
    const ready = trickled(pc, (candidate) => signaling.send({ type: 'sfu-candidate', target: 'camera', candidate: candidate as Record<string, unknown> | null }));
    for (const track of local?.getTracks() ?? []) {
      const init: RTCRtpTransceiverInit = { direction: 'sendonly', streams: [local!] };
      pc.addTransceiver(track, track.kind === 'video' ? { ...init, sendEncodings: CAMERA_ENCODINGS.map((encoding) => ({ ...encoding })) } : init);
    }
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    const reply = await signaling.request({ type: 'sfu-publish', kind: 'camera', offer: offer.sdp! });
    if (reply.type !== 'sfu-answer' || publisher !== pc) throw new Error(`publication refused: ${reply.type === 'error' ? reply.code : reply.type}`);
    await pc.setRemoteDescription({ type: 'answer', sdp: reply.sdp });
    ready();
  }

  function streamFor(info: SfuStream): MediaStream {
    const key = `${info.peerId}/${info.kind}`;
    let stream = remote.get(key);
    if (!stream) {
      stream = new MediaStream();
      remote.set(key, stream);
    }
    return stream;
  }

  function subscriberConnection(): RTCPeerConnection {
    const pc = new RTCPeerConnection(options.rtcConfig());
    pc.ontrack = (event) => {
      const info = streams.get(event.transceiver.mid ?? '');
      if (!info) return;
      const stream = streamFor(info);
      for (const old of stream.getTracks()) if (old.kind === event.track.kind) stream.removeTrack(old);
      stream.addTrack(event.track);
      options.onTrack(info.peerId, event.track, stream);
    };
    return pc;
  }

  let subscriberReady: (() => void) | null = null;

  /** Offers are taken one at a time: a second one arriving mid-negotiation waits for the first's answer. */
  let offers: Promise<void> = Promise.resolve();
  function takeOffer(sdp: string | null, list: SfuStream[]): Promise<void> {
    offers = offers.then(() => negotiate(sdp, list)).catch(() => {});
    return offers;
  }

  async function negotiate(sdp: string | null, list: SfuStream[]): Promise<void> {
    if (sdp === null || !active) return;
    streams = new Map(list.map((info) => [info.mid, info]));
    if (!subscriber) {
      subscriber = subscriberConnection();
      subscriberReady = trickled(subscriber, (candidate) => signaling.send({ type: 'sfu-candidate', target: 'subscription', candidate: candidate as Record<string, unknown> | null }));
    }
    const pc = subscriber;
    await pc.setRemoteDescription({ type: 'offer', sdp });
    const answer = await pc.createAnswer();
    await pc.setLocalDescription(answer);
    signaling.send({ type: 'sfu-answer', sdp: answer.sdp! });
    subscriberReady?.();
    // A track whose mid now carries someone else's media is moved to that person's tile.
    for (const transceiver of pc.getTransceivers()) {
      const info = streams.get(transceiver.mid ?? '');
      const track = transceiver.receiver.track;
      if (info && track && !streamFor(info).getTracks().includes(track)) {
        streamFor(info).addTrack(track);
        options.onTrack(info.peerId, track, streamFor(info));
      }
    }
    chooseLayers();
  }

  /** Each received video at the layer its tile needs: the tile is the <video> showing its stream. */
  function chooseLayers(): void {
    const videos = [...document.querySelectorAll('video')];
    for (const info of streams.values()) {
      if (info.media !== 'video') continue;
      const tile = videos.find((video) => video.srcObject === remote.get(`${info.peerId}/${info.kind}`));
      if (!tile) continue;
      const layer = info.kind === 'screen' ? 1 : layerFor(tile.clientWidth, window.devicePixelRatio || 1);
      if (layers.get(info.mid) === layer) continue;
      layers.set(info.mid, layer);
      signaling.send({ type: 'sfu-layer', mid: info.mid, substream: layer });
    }
  }

  async function subscribe(): Promise<void> {
    const reply = await signaling.request({ type: 'sfu-subscribe' });
    if (reply.type === 'sfu-offer') await takeOffer(reply.sdp, reply.streams);
  }

  function closeConnections(): void {
    publisher?.close();
    subscriber?.close();
    publisher = null;
    subscriber = null;
    subscriberReady = null;
    streams = new Map();
    layers.clear();
    remote.clear();
  }

  /** Publishes and subscribes from scratch, again and again while the SFU path is on and Janus does not take them. */
  async function connect(): Promise<void> {
    while (active) {
      try {
        await Promise.all([publish(), subscribe()]);
        return;
      } catch {
        closeConnections();
        await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
      }
    }
  }

  return {
    get active() {
      return active;
    },
    async start() {
      if (active) return;
      active = true;
      layerTimer = setInterval(chooseLayers, LAYERS_EVERY_MS);
      await connect();
    },
    stop() {
      if (!active) return;
      active = false;
      if (layerTimer !== null) clearInterval(layerTimer);
      layerTimer = null;
      signaling.send({ type: 'sfu-leave' });
      closeConnections();
    },
    async handle(message) {
      if (!active) return;
      if (message.type === 'sfu-offer' && !('requestId' in message)) return takeOffer(message.sdp, message.streams);
      if (message.type === 'sfu-restart') {
        closeConnections();
        await connect();
      }
    },
    connections: () => [publisher, subscriber].filter((pc): pc is RTCPeerConnection => pc !== null),
  };
}

// The call's second media path (docs/design.md, "Group calls through an
// SFU"): one publication of this page's camera and microphone (simulcast), and
// one subscription carrying everyone else's media, both negotiated with the
// room's Janus through Parley's signaling (docs/signaling.md, "Group calls
// through an SFU"). Janus offers the subscription, the page answers; each
// received track goes to its participant's tile through onTrack, as the
// mesh's do. Which layer each received video comes in follows its tile.
// Warm (start(false)), both are up but the publication sends nothing: the
// call is still peer to peer, and a third person's arrival only has to
// switch the camera on (docs/design.md, "Group calls through an SFU", Warm path).
import type { ServerMessage, SfuKind, SfuStream } from '../../../src/shared/protocol.js';
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
  /** A received track, in the stream of its participant's camera or screen (`kind`). */
  onTrack(peerId: string, track: MediaStreamTrack, from: MediaStream, kind: SfuKind): void;
}

export interface SfuCall {
  readonly active: boolean;
  /** Whether the publications send this page's camera and microphone (false: warm, up but silent). */
  readonly sending: boolean;
  /** The screen this page shares (a second publication while the SFU path is on), or null when it stops. */
  share(screen: MediaStream | null): void;
  /** Sends `next` instead of `previous` on the publications (a camera or microphone switched), without renegotiating. */
  replaceTrack(previous: MediaStreamTrack, next: MediaStreamTrack): Promise<void>;
  /** The id of the stream a participant's screen arrives in here, which `screenshare-started` must name on this path. */
  screenStreamId(peerId: string): string;
  /** Publishes and subscribes; `send` false keeps the camera's publication silent (warm) until send(true). */
  start(send?: boolean): Promise<void>;
  /** Starts or stops sending on the publications made (a warm path going live, or back to warm). */
  send(on: boolean): void;
  stop(): void;
  /** Messages of the SFU (an updated subscription, a restart); others are ignored. */
  handle(message: ServerMessage): Promise<void>;
  /** The publication and the subscription, for stats (upload, quality). */
  connections(): RTCPeerConnection[];
  /** The one connection everyone else's media arrives on, once made. */
  subscription(): RTCPeerConnection | null;
  /** Whether a participant's camera arrives on the subscription: its video decoded frames (its sound came, if it sends no video). */
  receiving(peerId: string): Promise<boolean>;
  /** The stream a participant's camera arrives in on the subscription, null before any of its tracks did. */
  camera(peerId: string): MediaStream | null;
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

/**
 * One publication: the camera (simulcast) with the microphone, or a screen
 * (one layer: its text must stay sharp). `made` learns of the connection at
 * once; `current` says whether it is still wanted when Janus's answer comes.
 */
async function publication(
  options: SfuCallOptions,
  kind: SfuKind,
  local: MediaStream | null,
  made: (pc: RTCPeerConnection) => void,
  current: (pc: RTCPeerConnection) => boolean,
  sending: boolean,
  offered?: () => void,
): Promise<void> {
  const { signaling } = options;
  const pc = new RTCPeerConnection(options.rtcConfig());
  made(pc);
  const ready = trickled(pc, (candidate) => signaling.send({ type: 'sfu-candidate', target: kind, candidate: candidate as Record<string, unknown> | null }));
  for (const track of local?.getTracks() ?? []) {
    const init: RTCRtpTransceiverInit = { direction: 'sendonly', streams: [local!] };
    // Silent, the m-line is negotiated without a track: sending later is a replaceTrack, no new offer.
    pc.addTransceiver(sending ? track : track.kind, track.kind === 'video' && kind === 'camera' ? { ...init, sendEncodings: CAMERA_ENCODINGS.map((encoding) => ({ ...encoding })) } : init);
  }
  const offer = await pc.createOffer();
  await pc.setLocalDescription(offer);
  const replied = signaling.request({ type: 'sfu-publish', kind, offer: offer.sdp! });
  offered?.();
  const reply = await replied;
  if (reply.type !== 'sfu-answer' || !current(pc)) throw new Error(`publication refused: ${reply.type === 'error' ? reply.code : reply.type}`);
  await pc.setRemoteDescription({ type: 'answer', sdp: reply.sdp });
  ready();
}

/** Each received video at the layer its tile needs (the tile is the <video> showing its stream); `asked` keeps what was asked per mid. */
function chooseLayers(streams: Map<string, SfuStream>, remote: Map<string, MediaStream>, asked: Map<string, Substream>, send: (mid: string, layer: Substream) => void): void {
  const videos = [...document.querySelectorAll('video')];
  for (const info of streams.values()) {
    if (info.media !== 'video') continue;
    // A camera tile plays a stream of its own with the tracks of the one it shows (remote-peers.ts, showCamera).
    const tracks = remote.get(`${info.peerId}/${info.kind}`)?.getVideoTracks() ?? [];
    const tile = videos.find((video) => video.srcObject instanceof MediaStream && video.srcObject.getVideoTracks().some((track) => tracks.includes(track)));
    if (!tile) continue;
    const layer = info.kind === 'screen' ? 1 : layerFor(tile.clientWidth, window.devicePixelRatio || 1);
    if (asked.get(info.mid) === layer) continue;
    asked.set(info.mid, layer);
    send(info.mid, layer);
  }
}

/** Sends `next` instead of `previous` on these connections' senders, without renegotiating. */
async function replaceOn(connections: (RTCPeerConnection | null)[], previous: MediaStreamTrack, next: MediaStreamTrack): Promise<void> {
  const senders = connections.flatMap((pc) => pc?.getSenders() ?? []).filter((sender) => sender.track === previous);
  await Promise.all(senders.map((sender) => sender.replaceTrack(next).catch(() => {})));
}

/** Whether a participant's camera arrives on the subscription `pc`: its video decoded frames (its sound came, if it sends no video). */
async function cameraArriving(pc: RTCPeerConnection | null, streams: Map<string, SfuStream>, peerId: string): Promise<boolean> {
  const camera = [...streams.values()].filter((info) => info.peerId === peerId && info.kind === 'camera');
  const info = camera.find((s) => s.media === 'video') ?? camera.find((s) => s.media === 'audio');
  const receiver = info && pc?.getTransceivers().find((transceiver) => transceiver.mid === info.mid)?.receiver;
  if (!receiver) return false;
  let arrived = false;
  (await receiver.getStats()).forEach((s: { type: string; framesDecoded?: number; packetsReceived?: number }) => {
    if (s.type === 'inbound-rtp' && ((info.media === 'video' ? s.framesDecoded : s.packetsReceived) ?? 0) > 0) arrived = true;
  });
  return arrived;
}

/**
 * Janus the subscription's DTLS client (setup:passive in the answer), as on the publications, where the handshake
 * followed ICE within tens of ms; with the browser as the client (Chromium's setup:active) the subscription's took
 * 0.2-0.7 s (bench/README.md, "Issue 41: the third person's first frame").
 */
const janusLeadsDtls = (answer: string) => answer.replace(/a=setup:active/g, 'a=setup:passive');

/**
 * The camera's offer goes first: Parley works on a participant's requests in order, and a publication up sooner
 * is what the others' subscriptions (a newcomer's first picture) wait for; a subscription asked for before anyone
 * publishes is empty anyway, and Parley offers one as soon as someone does.
 */
async function publishFirst(camera: (offered: () => void) => Promise<void>, subscribe: () => Promise<void>, screen: Promise<void> | undefined): Promise<void> {
  let offered = () => {};
  const sent = new Promise<void>((resolve) => (offered = resolve));
  await Promise.all([camera(offered), sent.then(subscribe), screen]);
}

/** Puts the camera's tracks on the publication's senders, or takes them off (null: nothing sent), without renegotiating. */
function sendOn(publisher: RTCPeerConnection | null, local: MediaStream | null, on: boolean): void {
  for (const transceiver of publisher?.getTransceivers() ?? []) {
    const track = on ? (local?.getTracks().find((t) => t.kind === transceiver.receiver.track.kind) ?? null) : null;
    if (transceiver.sender.track !== track) transceiver.sender.replaceTrack(track).catch(() => {});
  }
}

/** One stream per participant and publication (`peerId/kind`), as the mesh delivers a peer's camera. */
function remoteStreams() {
  const byKey = new Map<string, MediaStream>();
  return {
    byKey,
    of(info: Pick<SfuStream, 'peerId' | 'kind'>): MediaStream {
      const key = `${info.peerId}/${info.kind}`;
      if (!byKey.has(key)) byKey.set(key, new MediaStream());
      return byKey.get(key)!;
    },
    /** A participant's camera stream, null before any of its tracks came. */
    camera(peerId: string): MediaStream | null {
      const stream = byKey.get(`${peerId}/camera`);
      return stream?.getTracks().length ? stream : null;
    },
  };
}
type RemoteStreams = ReturnType<typeof remoteStreams>;

/** The subscription's connection: each track it receives joins the stream of the participant whose media its mid carries. */
function subscriberConnection(options: SfuCallOptions, streams: () => Map<string, SfuStream>, remote: RemoteStreams): RTCPeerConnection {
  const pc = new RTCPeerConnection(options.rtcConfig());
  pc.ontrack = (event) => {
    const info = streams().get(event.transceiver.mid ?? '');
    if (!info) return;
    const stream = remote.of(info);
    for (const old of stream.getTracks()) if (old.kind === event.track.kind) stream.removeTrack(old);
    stream.addTrack(event.track);
    options.onTrack(info.peerId, event.track, stream, info.kind);
  };
  return pc;
}

/** After a negotiation: a track whose mid now carries someone else's media is moved to that person's stream (and tile). */
function followMids(pc: RTCPeerConnection, streams: Map<string, SfuStream>, remote: RemoteStreams, onTrack: SfuCallOptions['onTrack']): void {
  for (const transceiver of pc.getTransceivers()) {
    const info = streams.get(transceiver.mid ?? '');
    const track = transceiver.receiver.track;
    if (info && track && !remote.of(info).getTracks().includes(track)) {
      remote.of(info).addTrack(track);
      onTrack(info.peerId, track, remote.of(info), info.kind);
    }
  }
}

export function createSfuCall(options: SfuCallOptions): SfuCall {
  const { signaling } = options;
  let active = false;
  let sending = false;
  let publisher: RTCPeerConnection | null = null;
  let screenPublisher: RTCPeerConnection | null = null;
  let screen: MediaStream | null = null;
  let subscriber: RTCPeerConnection | null = null;
  let streams = new Map<string, SfuStream>();
  const remote = remoteStreams();
  const layers = new Map<string, Substream>();
  let layerTimer: ReturnType<typeof setInterval> | null = null;

  async function publish(kind: SfuKind, local: MediaStream | null, offered?: () => void): Promise<void> {
    await publication(options, kind, local, (pc) => {
      if (kind === 'camera') publisher = pc;
      else screenPublisher = pc;
    }, (pc) => (kind === 'camera' ? publisher : screenPublisher) === pc, kind === 'screen' || sending, offered);
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
      subscriber = subscriberConnection(options, () => streams, remote);
      subscriberReady = trickled(subscriber, (candidate) => signaling.send({ type: 'sfu-candidate', target: 'subscription', candidate: candidate as Record<string, unknown> | null }));
    }
    const pc = subscriber;
    await pc.setRemoteDescription({ type: 'offer', sdp });
    const answer = janusLeadsDtls((await pc.createAnswer()).sdp!);
    await pc.setLocalDescription({ type: 'answer', sdp: answer });
    signaling.send({ type: 'sfu-answer', sdp: answer });
    subscriberReady?.();
    followMids(pc, streams, remote, options.onTrack);
    layersNow();
  }

  const layersNow = () => chooseLayers(streams, remote.byKey, layers, (mid, substream) => signaling.send({ type: 'sfu-layer', mid, substream }));

  async function subscribe(): Promise<void> {
    const reply = await signaling.request({ type: 'sfu-subscribe' });
    if (reply.type === 'sfu-offer') await takeOffer(reply.sdp, reply.streams);
  }

  function closeConnections(): void {
    publisher?.close();
    screenPublisher?.close();
    subscriber?.close();
    publisher = null;
    screenPublisher = null;
    subscriber = null;
    subscriberReady = null;
    streams = new Map();
    layers.clear();
    remote.byKey.clear();
  }

  /** Publishes and subscribes from scratch, again and again while the SFU path is on and Janus does not take them. */
  async function connect(): Promise<void> {
    while (active) {
      try {
        await publishFirst((offered) => publish('camera', options.stream(), offered), subscribe, screen && sending ? publish('screen', screen) : undefined);
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
    get sending() {
      return active && sending;
    },
    async start(send = true) {
      if (active) return this.send(send);
      active = true;
      sending = send;
      layerTimer = setInterval(layersNow, LAYERS_EVERY_MS);
      await connect();
    },
    send(on) {
      if (!active || sending === on) return;
      sending = on;
      sendOn(publisher, options.stream(), on);
      // A screen goes through the SFU only while the call does (peer to peer, the mesh carries it).
      if (!screen) return;
      if (on) publish('screen', screen).catch(() => {});
      else {
        screenPublisher?.close();
        screenPublisher = null;
        signaling.send({ type: 'sfu-unpublish', kind: 'screen' });
      }
    },
    stop() {
      if (!active) return;
      active = false;
      sending = false;
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
    connections: () => [publisher, screenPublisher, subscriber].filter((pc): pc is RTCPeerConnection => pc !== null),
    subscription: () => subscriber,
    receiving: (peerId) => cameraArriving(subscriber, streams, peerId),
    camera: remote.camera,
    share(shared) {
      screen = shared;
      if (!active || !sending) return;
      screenPublisher?.close();
      screenPublisher = null;
      if (shared) publish('screen', shared).catch(() => {});
      else signaling.send({ type: 'sfu-unpublish', kind: 'screen' });
    },
    screenStreamId: (peerId) => remote.of({ peerId, kind: 'screen' }).id,
    replaceTrack: (previous, next) => replaceOn([publisher, screenPublisher], previous, next),
  };
}

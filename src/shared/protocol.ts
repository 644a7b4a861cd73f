// The signaling protocol between a participant's browser and the server
// (docs/signaling.md). Shared with web/: no Node imports here.
//
// Every frame is one JSON object with a kebab-case `type`. A request carries
// a `requestId` and gets exactly one reply (a result or an `error` with the
// same requestId); notifications get none. SDP and ICE travel inside `signal`
// untouched: the server only decides who may receive them.
import { parseRecordingMessage, type RecordingClientMessage, type RecordingErrorCode, type RecordingServerMessage } from './recording-protocol.js';

/** Frames above this size are refused with `too-large` (an SDP with many candidates is ~10 KB). */
export const MAX_FRAME_BYTES = 64 * 1024;
export const MAX_CHAT_LENGTH = 2000;
export const MAX_DISPLAY_NAME_LENGTH = 100;
export const MAX_REQUEST_ID_LENGTH = 64;
/** How often the page reports what its connections measure (and once more as it leaves). */
export const NETWORK_REPORT_EVERY_MS = 10_000;

export type Role = 'host' | 'guest';

export interface RoomSettings {
  chat: boolean;
  screenshare: boolean;
  invites: boolean;
  audioIndicator: boolean;
}

/** What others see of a participant: `id` is public, never the secret participant token. */
export interface PeerInfo {
  id: string;
  name: string;
  role: Role;
}

export interface IceServerInfo {
  urls: string | string[];
  username?: string;
  credential?: string;
}

/** The opaque payload of a `signal`: a session description or an ICE candidate. */
export type SignalData = { description: { type: string; sdp?: string } } | { candidate: Record<string, unknown> | null };

// ---- browser -> server ----

export type ClientMessage =
  /**
   * `offer` (optional, a new participant's only): the SDP offer of its first
   * peer connection. The server passes it on as that connection's `signal` to
   * the peer in the call longest, and `joined.offeredTo` says which: the offer
   * does not wait for the reply's round trip (docs/signaling.md).
   */
  | { type: 'join'; requestId: string; joinToken: string; displayName: string; participantToken?: string; offer?: string }
  | { type: 'signal'; to: string; data: SignalData }
  /** `messageId` (optional, chosen by the page, at most 64 characters) is the same on a retry: a message that arrived late after all shows once. */
  | { type: 'chat'; requestId: string; text: string; messageId?: string }
  | { type: 'media-state'; audio: boolean; video: boolean }
  | { type: 'screenshare-start'; requestId: string; streamId: string }
  | { type: 'screenshare-stop' }
  | { type: 'invite-create'; requestId: string }
  | { type: 'leave'; requestId: string }
  /** Host controls (docs/design.md, "Waiting room"): let a waiting participant in, turn it away, or remove a guest from the call. */
  | { type: 'admit'; requestId: string; peerId: string }
  | { type: 'deny'; requestId: string; peerId: string }
  | { type: 'remove'; requestId: string; peerId: string }
  /**
   * What the browser measured lately (getStats), for the participant
   * sessions' network summary (docs/api.md). A notification: no reply. A
   * figure the browser does not report is null.
   */
  | { type: 'network-report'; rttMs: number | null; lossPercent: number | null; bitrateKbps: number | null; relayed: boolean | null }
  /** The browser's heartbeat: answered at once with `pong`, so the page notices a dead connection itself. */
  | { type: 'ping' }
  /**
   * Group calls through the SFU (docs/signaling.md, "Group calls through an
   * SFU"): the browser's offer of one publication (its camera and microphone,
   * or its screen), answered with `sfu-answer`; Parley passes it to Janus.
   */
  | { type: 'sfu-publish'; requestId: string; kind: SfuKind; offer: string }
  /** Stops a publication (a screen share ended). */
  | { type: 'sfu-unpublish'; kind: SfuKind }
  /** Asks for the one subscription carrying everyone else's media: answered with `sfu-offer` (sdp null while nobody publishes). */
  | { type: 'sfu-subscribe'; requestId: string }
  /** The browser's answer to the subscription's latest `sfu-offer`. */
  | { type: 'sfu-answer'; sdp: string }
  /** One ICE candidate (null: all gathered) of a publication or of the subscription. */
  | { type: 'sfu-candidate'; target: SfuKind | 'subscription'; candidate: Record<string, unknown> | null }
  /** Which simulcast layer of a received video (its mid) this page wants: 0 the smallest. */
  | { type: 'sfu-layer'; mid: string; substream: 0 | 1 | 2 }
  /** Back to peer to peer: every publication and the subscription go. */
  | { type: 'sfu-leave' }
  /** Recording with consent (recording-protocol.ts). */
  | RecordingClientMessage;

/** A publication: the camera (with the microphone) or a shared screen. */
export type SfuKind = 'camera' | 'screen';

/** What a subscription's mid carries: whose media, which publication, audio or video. */
export interface SfuStream {
  mid: string;
  peerId: string;
  kind: SfuKind;
  media: 'audio' | 'video';
}

// ---- server -> browser ----

export type ErrorCode =
  | 'bad-request'
  | 'too-large'
  | 'unknown-type'
  | 'not-joined'
  | 'already-joined'
  | 'not-found'
  | 'room-closed'
  | 'room-full'
  | 'chat-disabled'
  | 'screenshare-disabled'
  | 'invites-disabled'
  | 'forbidden'
  | 'rate-limited'
  | 'unavailable'
  /** The request needs a participant in the call, and this one still waits to be let in. */
  | 'not-admitted'
  /** A join that resumes a participant a host removed from the call, or did not let in. */
  | 'removed'
  | 'denied'
  | RecordingErrorCode;

/** What a page needs to be in the call: the reply to a join, or the notification that a host let it in. */
export interface CallEntry {
  /** The secret that resumes this participant after a dropped connection, and authorises its feedback. */
  participantToken: string;
  self: PeerInfo;
  peers: PeerInfo[];
  /** Who waits to be let in, oldest first: filled for a host, always empty for a guest. */
  waiting: PeerInfo[];
  settings: RoomSettings;
  iceServers: IceServerInfo[];
  iceTransportPolicy: 'all' | 'relay';
  returnUrl: string;
  resumed: boolean;
  /** Present when the server has an SFU. */
  sfu?: SfuEntry;
}

/**
 * How a call uses the server's SFU: from `minParticipants` people in the call, media goes through it; `warm`: one
 * below that, the pages publish silently and subscribe already (docs/design.md, "Group calls through an SFU", Warm path).
 */
export interface SfuEntry {
  minParticipants: number;
  warm: boolean;
}

export type ServerMessage =
  /** `offeredTo`: the peer the join's `offer` went to, as a `signal` from this participant. */
  | ({ type: 'joined'; requestId: string; offeredTo?: string } & CallEntry)
  /**
   * The reply to a join through a guest link of a room with a waiting room:
   * nothing of the call, only what resumes the wait after a drop or reload.
   */
  | { type: 'waiting'; requestId: string; participantToken: string; self: PeerInfo; returnUrl: string }
  /** A host let this waiting participant in: from now on it is in the call, as after `joined`. */
  | ({ type: 'admitted' } & CallEntry)
  /** A host did not let this waiting participant in; the socket closes right after (4005). */
  | { type: 'denied' }
  /** A host removed this participant from the call; the socket closes right after (4006). */
  | { type: 'removed' }
  /** To hosts: someone started (or, after a drop, resumed) waiting to be let in. */
  | { type: 'participant-waiting'; peer: PeerInfo }
  /** To hosts: someone no longer waits (let in, turned away, or gone). */
  | { type: 'waiting-ended'; peerId: string; outcome: 'admitted' | 'denied' | 'left' }
  | { type: 'ack'; requestId: string }
  | { type: 'invite-created'; requestId: string; url: string }
  | { type: 'left'; requestId: string }
  | { type: 'error'; code: ErrorCode; message: string; requestId?: string }
  | { type: 'peer-joined'; peer: PeerInfo }
  /**
   * Someone in the call, announced again after the path between nodes came
   * back (Redis): a page that does not know this peer yet calls it; one that
   * does ignores it.
   */
  | { type: 'peer-present'; peer: PeerInfo }
  /** The peer's connection dropped; it stays in the call for the reconnect grace and may come back (peer-joined). */
  | { type: 'peer-reconnecting'; peerId: string }
  | { type: 'peer-left'; peerId: string }
  | { type: 'signal'; from: string; data: SignalData }
  | { type: 'chat'; from: string; name: string; text: string; sentAt: string; messageId?: string }
  | { type: 'media-state'; from: string; audio: boolean; video: boolean }
  | { type: 'screenshare-started'; from: string; streamId: string }
  | { type: 'screenshare-stopped'; from: string }
  | { type: 'settings'; settings: RoomSettings }
  | { type: 'pong' }
  /**
   * Fresh TURN credentials for this participant, sent every half of their
   * life while it is in the call (ice-renewal.ts): for the connections it
   * makes or restarts from now on. Only with TURN configured.
   */
  | { type: 'ice-servers'; iceServers: IceServerInfo[] }
  /** The room was closed or deleted through the API: the socket closes right after. */
  | { type: 'room-closed'; reason: 'closed' | 'deleted' }
  /** Janus's answer to a publication's offer. */
  | { type: 'sfu-answer'; requestId: string; kind: SfuKind; sdp: string }
  /**
   * The subscription's offer: the reply to `sfu-subscribe` (with its
   * requestId), and again, without one, whenever someone's publication comes
   * or goes. `streams` says whose media each mid carries.
   */
  | { type: 'sfu-offer'; requestId: string; sdp: string | null; streams: SfuStream[] }
  | { type: 'sfu-offer'; sdp: string | null; streams: SfuStream[] }
  /** The SFU instance of the room failed and the room moved: publish and subscribe again. */
  | { type: 'sfu-restart' }
  | RecordingServerMessage;

export type ParseResult = { ok: true; message: ClientMessage } | { ok: false; code: ErrorCode; message: string; requestId?: string };

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isString = (v: unknown, max: number): v is string => typeof v === 'string' && v.length <= max;
const isId = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v);
/**
 * An RTCIceCandidateInit is flat (candidate, sdpMid, sdpMLineIndex,
 * usernameFragment). Nested values are refused: a deeply nested one parsed
 * fine but overflowed the stack when the relay serialised it again.
 */
const isFlatCandidate = (v: unknown): v is Obj =>
  isObject(v) && Object.keys(v).length <= 8 && Object.values(v).every((x) => x === null || ['string', 'number', 'boolean'].includes(typeof x));

/** The one parser of incoming frames: anything it returns ok is a well-formed ClientMessage. */
export function parseClientMessage(raw: string): ParseResult {
  // Byte length, not characters: a frame of multi-byte characters is as large as it is on the wire.
  const tooLarge = raw.length > MAX_FRAME_BYTES || new TextEncoder().encode(raw).length > MAX_FRAME_BYTES;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return tooLarge ? { ok: false, code: 'too-large', message: `Frames are limited to ${MAX_FRAME_BYTES} bytes` } : { ok: false, code: 'bad-request', message: 'A frame must be one JSON object' };
  }
  const requestId =
    isObject(value) && typeof value.requestId === 'string' && value.requestId.length <= MAX_REQUEST_ID_LENGTH ? value.requestId : undefined;
  // Still answered with its requestId, so that the request gets its one reply.
  if (tooLarge) return { ok: false, code: 'too-large', message: `Frames are limited to ${MAX_FRAME_BYTES} bytes`, ...(requestId ? { requestId } : {}) };
  if (!isObject(value)) return { ok: false, code: 'bad-request', message: 'A frame must be one JSON object' };
  const bad = (message: string): ParseResult => ({ ok: false, code: 'bad-request', message, ...(requestId ? { requestId } : {}) });
  const needsRequestId = (build: (requestId: string) => ClientMessage): ParseResult =>
    requestId && requestId.length > 0 ? { ok: true, message: build(requestId) } : bad('This request needs a requestId (a string of at most 64 characters)');

  switch (value.type) {
    case 'join': {
      if (!isId(value.joinToken)) return bad('joinToken must be the token of a join link');
      if (!isString(value.displayName, MAX_DISPLAY_NAME_LENGTH * 4)) return bad('displayName must be a string');
      if (value.participantToken !== undefined && !isId(value.participantToken)) return bad('participantToken is malformed');
      if (value.offer !== undefined && (typeof value.offer !== 'string' || value.offer === '')) return bad('offer must be the SDP of an offer');
      const { joinToken, displayName, participantToken, offer } = value;
      return needsRequestId((id) => ({
        type: 'join',
        requestId: id,
        joinToken,
        displayName,
        ...(participantToken !== undefined ? { participantToken: participantToken as string } : {}),
        ...(offer !== undefined ? { offer: offer as string } : {}),
      }));
    }
    case 'signal': {
      if (!isId(value.to)) return bad('signal needs `to`, the id of a peer');
      const data = value.data;
      if (!isObject(data)) return bad('signal needs `data`');
      if (isObject(data.description) && typeof data.description.type === 'string') {
        const { type, sdp } = data.description;
        if (sdp !== undefined && typeof sdp !== 'string') return bad('description.sdp must be a string');
        return { ok: true, message: { type: 'signal', to: value.to, data: { description: { type, ...(sdp !== undefined ? { sdp } : {}) } } } };
      }
      if ('candidate' in data && (data.candidate === null || isFlatCandidate(data.candidate))) {
        return { ok: true, message: { type: 'signal', to: value.to, data: { candidate: data.candidate } } };
      }
      return bad('signal data must hold a description or a candidate');
    }
    case 'chat': {
      if (typeof value.text !== 'string' || value.text.trim() === '') return bad('text must be a non-empty string');
      if ([...value.text].length > MAX_CHAT_LENGTH) return bad(`text is limited to ${MAX_CHAT_LENGTH} characters`);
      const text = value.text;
      const { messageId } = value;
      if (messageId !== undefined && (typeof messageId !== 'string' || messageId.length === 0 || messageId.length > MAX_REQUEST_ID_LENGTH)) {
        return bad(`messageId must be a string of 1 to ${MAX_REQUEST_ID_LENGTH} characters`);
      }
      return needsRequestId((id) => ({ type: 'chat', requestId: id, text, ...(messageId !== undefined ? { messageId } : {}) }));
    }
    case 'media-state':
      if (typeof value.audio !== 'boolean' || typeof value.video !== 'boolean') return bad('audio and video must be booleans');
      return { ok: true, message: { type: 'media-state', audio: value.audio, video: value.video } };
    case 'screenshare-start': {
      if (!isString(value.streamId, 128) || value.streamId === '') return bad('streamId must be the id of the shared stream');
      const streamId = value.streamId;
      return needsRequestId((id) => ({ type: 'screenshare-start', requestId: id, streamId }));
    }
    case 'screenshare-stop':
      return { ok: true, message: { type: 'screenshare-stop' } };
    case 'invite-create':
      return needsRequestId((id) => ({ type: 'invite-create', requestId: id }));
    case 'leave':
      return needsRequestId((id) => ({ type: 'leave', requestId: id }));
    case 'ping':
      return { ok: true, message: { type: 'ping' } };
    case 'admit':
    case 'deny':
    case 'remove': {
      if (!isId(value.peerId)) return bad(`${value.type} needs \`peerId\`, the id of a participant`);
      const { type, peerId } = value;
      return needsRequestId((id) => ({ type, requestId: id, peerId }));
    }
    case 'network-report': {
      // Bounded figures: a report is stored, so nonsense must not get in.
      const figure = (v: unknown, max: number) => v === null || (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= max);
      const { rttMs, lossPercent, bitrateKbps, relayed } = value;
      if (!figure(rttMs, 60_000) || !figure(lossPercent, 100) || !figure(bitrateKbps, 1_000_000)) {
        return bad('network-report needs rttMs (0..60000), lossPercent (0..100) and bitrateKbps (0..1000000), each a number or null');
      }
      if (relayed !== null && typeof relayed !== 'boolean') return bad('relayed must be a boolean or null');
      return {
        ok: true,
        message: { type: 'network-report', rttMs: rttMs as number | null, lossPercent: lossPercent as number | null, bitrateKbps: bitrateKbps as number | null, relayed },
      };
    }
    case 'sfu-publish':
    case 'sfu-unpublish':
    case 'sfu-subscribe':
    case 'sfu-answer':
    case 'sfu-candidate':
    case 'sfu-layer':
    case 'sfu-leave':
      return parseSfuMessage(value, requestId, bad);
    case 'recording-start':
    case 'recording-stop':
    case 'recording-consent': {
      if (!requestId) return bad('This request needs a requestId (a string of at most 64 characters)');
      const parsed = parseRecordingMessage(value, requestId);
      return typeof parsed === 'string' ? bad(parsed) : { ok: true, message: parsed };
    }
    default:
      return {
        ok: false,
        code: 'unknown-type',
        message: typeof value.type === 'string' ? `Unknown message type "${value.type.slice(0, 40)}"` : 'A frame needs a string `type`',
        ...(requestId ? { requestId } : {}),
      };
  }
}

const isKind = (v: unknown): v is SfuKind => v === 'camera' || v === 'screen';
const isSdp = (v: unknown): v is string => typeof v === 'string' && v.startsWith('v=0');

/** The SFU's messages (docs/signaling.md, "Group calls through an SFU"): their SDP goes to Janus, so it must be SDP. */
function parseSfuMessage(value: Obj, requestId: string | undefined, bad: (message: string) => ParseResult): ParseResult {
  const needsRequestId = (build: (requestId: string) => ClientMessage): ParseResult =>
    requestId && requestId.length > 0 ? { ok: true, message: build(requestId) } : bad('This request needs a requestId (a string of at most 64 characters)');
  switch (value.type) {
    case 'sfu-publish': {
      const { kind, offer } = value;
      if (!isKind(kind)) return bad('kind must be "camera" or "screen"');
      if (!isSdp(offer)) return bad('offer must be the SDP of an offer');
      return needsRequestId((id) => ({ type: 'sfu-publish', requestId: id, kind, offer }));
    }
    case 'sfu-unpublish':
      if (!isKind(value.kind)) return bad('kind must be "camera" or "screen"');
      return { ok: true, message: { type: 'sfu-unpublish', kind: value.kind } };
    case 'sfu-subscribe':
      return needsRequestId((id) => ({ type: 'sfu-subscribe', requestId: id }));
    case 'sfu-answer':
      if (!isSdp(value.sdp)) return bad('sdp must be the SDP of an answer');
      return { ok: true, message: { type: 'sfu-answer', sdp: value.sdp } };
    case 'sfu-candidate': {
      const { target, candidate } = value;
      if (!isKind(target) && target !== 'subscription') return bad('target must be "camera", "screen" or "subscription"');
      if (candidate !== null && !isFlatCandidate(candidate)) return bad('candidate must be an ICE candidate or null');
      return { ok: true, message: { type: 'sfu-candidate', target, candidate } };
    }
    case 'sfu-layer': {
      const { mid, substream } = value;
      if (!isString(mid, 16) || mid === '') return bad('mid must be the mid of a received stream');
      if (substream !== 0 && substream !== 1 && substream !== 2) return bad('substream must be 0, 1 or 2');
      return { ok: true, message: { type: 'sfu-layer', mid, substream } };
    }
    default:
      return { ok: true, message: { type: 'sfu-leave' } };
  }
}

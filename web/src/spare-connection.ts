// The call's first peer connection, made while the join screen shows
// (prepareConnection) and kept ready there (keepSpareConnection): made again
// for each preview stream, and gathering its candidates with the join page's
// ICE servers during the first minutes after the page loaded
// (gatherAheadWindowMs). Candidates gathered on another network are stale,
// and so are they all once that window is over: when the browser says the
// network changed, and when the window ends (then one that gathers at the
// Join), the connection is made again. The call takes it for its first peer
// (Mesh.useSpare).
import type { JoinPageData } from '../../src/shared/join-page-data.js';
import { preferAudio } from './audio-priority.js';

/** The longest the call's first connection gathers with the join page's ICE servers (gatherAheadWindowMs). */
const GATHER_AHEAD_MAX_MS = 5 * 60_000;

/**
 * For how long after the join page loaded the call's first connection may
 * gather its candidates with the page's ICE servers (prepareConnection): five
 * minutes, and at most a tenth of the page's TURN credentials' life
 * (`ttlSeconds`, null without TURN). Candidates gathered long ago are more
 * likely to be stale; and while coturn keeps refreshing a relay after its
 * credentials expired (docs/signaling.md, "TURN"), a TURN server that checks
 * them at every refresh would end it then, at most that much sooner than one
 * allocated at the Join.
 */
export function gatherAheadWindowMs(ttlSeconds: number | null): number {
  return Math.min(GATHER_AHEAD_MAX_MS, ttlSeconds === null ? Infinity : ttlSeconds * 100);
}

/** A peer connection made ahead (prepareConnection), with its offer made. */
export interface SpareConnection {
  pc: RTCPeerConnection;
  /** null when the browser would not make one: the connection then offers as any other. */
  offer: Promise<RTCSessionDescriptionInit | null>;
  /** The offer once made (null until then). */
  made: RTCSessionDescriptionInit | null;
  /**
   * Gathering ahead: its offer applied, with the join page's ICE servers, and
   * fit for the call until this time (Date.now()). null: nothing gathered, it
   * is configured with the call's servers when taken (Mesh.takeSpare).
   */
  gatheredUntil: number | null;
  /** What it gathered so far, in order (null: gathering ended); the first `inSdp` of them went out in its offer's SDP. */
  candidates: (Record<string, unknown> | null)[];
  inSdp: number;
}

/** A sender's track and the stream the other side groups it in. */
export interface Outgoing {
  track: MediaStreamTrack;
  stream: MediaStream;
}

/** The SDP of a spare that gathered ahead, as it is sent now: the candidates gathered so far are in it. */
export function spareSdp(spare: SpareConnection): string {
  spare.inSdp = spare.candidates.length;
  return spare.pc.localDescription!.sdp;
}

/**
 * A peer connection sending `tracks`, and its offer, made ahead of the call
 * (while the join screen shows): the newcomer's first offer then leaves with
 * the `join` itself (Mesh.spareOffer), or as soon as the `joined` reply is
 * read, without waiting for the connection's setup (its DTLS certificate, the
 * senders, the offer itself: 10–20 ms of the click to the offer,
 * bench/README.md, browser); a participant alone in the room answers the
 * first one to come with it.
 *
 * `ahead`: the join page's ICE servers and until when the connection may be
 * used with them (gatherAheadWindowMs). It then gathers now: its offer is
 * applied, and the candidates, which only the call's TURN and STUN servers
 * can give and which would otherwise be gathered after the `joined` reply,
 * go with the offer in its SDP. The other side's checks can start as soon as
 * it has the offer, whatever this page is busy with meanwhile (bench/README.md,
 * browser). Without `ahead` it gathers nothing until Mesh.add configures it
 * with the `joined` reply's servers.
 */
export function prepareConnection(tracks: Outgoing[], ahead?: { config: RTCConfiguration; until: number }): SpareConnection {
  const pc = new RTCPeerConnection(ahead?.config);
  for (const { track, stream } of tracks) pc.addTrack(track, stream);
  void preferAudio(pc);
  const made = pc.createOffer();
  const offer = ahead
    ? made.then(async (o) => {
        await pc.setLocalDescription(o);
        return o;
      })
    : made;
  const spare: SpareConnection = { pc, offer: offer.catch(() => null), made: null, gatheredUntil: ahead?.until ?? null, candidates: [], inSdp: 0 };
  // Until the connection is a peer's (its Peer sends them on), what it gathers is kept.
  if (ahead) pc.onicecandidate = ({ candidate }) => spare.candidates.push(candidate ? (candidate.toJSON() as Record<string, unknown>) : null);
  void spare.offer.then((o) => (spare.made = o));
  return spare;
}

export interface SpareKeeper {
  /** The preview's stream: the connection sends it. */
  useStream(stream: MediaStream): void;
  /** The connection for the call (null without WebRTC or without a stream); the keeper stops. */
  take(): SpareConnection | null;
}

export function keepSpareConnection(network: JoinPageData['network']): SpareKeeper {
  const config: RTCConfiguration = { iceServers: network.iceServers as RTCIceServer[], iceTransportPolicy: network.iceTransportPolicy };
  // From when the page loaded (performance.now() counts from there).
  const gatherUntil = Date.now() - performance.now() + gatherAheadWindowMs(network.ttlSeconds);
  let spare: SpareConnection | null = null;
  let stream: MediaStream | null = null;

  const make = () => {
    spare?.pc.close();
    spare = null;
    const sending = stream;
    if (!sending) return;
    try {
      const tracks = sending.getTracks().map((track) => ({ track, stream: sending }));
      spare = prepareConnection(tracks, Date.now() < gatherUntil ? { config, until: gatherUntil } : undefined);
    } catch {
      // No WebRTC here (or not allowed): the join screen works as before, and the call makes its connections itself.
    }
  };
  const networkInfo = (navigator as Navigator & { connection?: EventTarget }).connection;
  window.addEventListener('online', make);
  networkInfo?.addEventListener('change', make);
  const windowEnd = setTimeout(make, Math.max(0, gatherUntil - Date.now()));

  return {
    useStream(next) {
      stream = next;
      make();
    },
    take() {
      window.removeEventListener('online', make);
      networkInfo?.removeEventListener('change', make);
      clearTimeout(windowEnd);
      return spare;
    },
  };
}

// One RTCPeerConnection per other participant, negotiated with the
// "perfect negotiation" pattern (W3C WebRTC 1.0, §10.7 example): both sides
// may offer at any time; on a collision the polite side yields. Politeness is
// decided by comparing the two public peer ids, so both sides agree.
//
// Recovering (docs/call.md, "Recovering"): a connection that fails restarts
// ICE, again every few seconds while it stays failed; after a participant
// resumes, it restarts ICE on every connection it kept. A description whose
// DTLS fingerprint differs from the one a connection knows comes from a new
// connection on the other side (the page was reloaded, or it gave its old one
// up): ours is replaced by a fresh one, so both sides start over together.
import type { SignalData } from '../../src/shared/protocol.js';

/** While a connection stays failed, ICE is restarted this often (the first time at once). */
const RESTART_FAILED_EVERY_MS = 4000;
/** An offer of ours younger than this may still be answered: a repeated announcement leaves it be. */
const OFFER_IN_FLIGHT_MS = 1500;
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

/** Senders whose priority preferAudio has set: it asks nothing more of them. */
const prioritized = new WeakSet<RTCRtpSender>();

/**
 * On a thin link the voice matters more than the picture: audio senders get
 * the high priority of RTCRtpEncodingParameters (bitrate share and DSCP
 * marking), video the low one, which lets the congestion controller take
 * bitrate from the video first. Set ahead on the connection made while the
 * join screen shows (prepareConnection), where the browser has the encodings
 * before negotiation (Chromium), else once connected. Ahead, because each
 * getParameters() is a synchronous call into WebRTC's signaling thread: at
 * `connected`, while that thread sets the call up, the calls held the page
 * 3–7 ms just before the first frame (bench/README.md, browser).
 */
async function preferAudio(pc: RTCPeerConnection): Promise<void> {
  for (const sender of pc.getSenders()) {
    if (!sender.track || prioritized.has(sender)) continue;
    const priority: RTCPriorityType = sender.track.kind === 'audio' ? 'high' : 'low';
    const parameters = sender.getParameters();
    if (!parameters.encodings?.length) continue;
    if (!parameters.encodings.every((e) => e.priority === priority && e.networkPriority === priority)) {
      for (const encoding of parameters.encodings) {
        encoding.priority = priority;
        encoding.networkPriority = priority;
      }
      try {
        await sender.setParameters(parameters);
      } catch {
        continue; // Tried again at `connected`.
      }
    }
    prioritized.add(sender);
  }
}

/** The DTLS certificate fingerprint of an SDP: it identifies the RTCPeerConnection that made it. */
export function fingerprintOf(sdp: string | undefined): string | null {
  return /^a=fingerprint:(.+)$/m.exec(sdp ?? '')?.[1]?.trim() ?? null;
}

/** Whether an offer restarts ICE: its ICE username fragment differs from the one the connection knows (RFC 8839 §4.4.1.1.1). */
export function restartsIce(known: string | undefined, offer: string | undefined): boolean {
  const ufrag = (sdp: string | undefined) => /^a=ice-ufrag:(\S+)/m.exec(sdp ?? '')?.[1] ?? null;
  const before = ufrag(known);
  return before !== null && ufrag(offer) !== before;
}

export interface PeerEvents {
  send(to: string, data: SignalData): void;
  onTrack(peerId: string, track: MediaStreamTrack, stream: MediaStream): void;
  onState(peerId: string, state: RTCPeerConnectionState): void;
}

class Peer {
  readonly pc: RTCPeerConnection;
  private makingOffer = false;
  private ignoreOffer = false;
  /** When our offer now waiting for its answer went out. */
  private offeredAt = 0;
  private readonly polite: boolean;
  private restartTimer: ReturnType<typeof setInterval> | null = null;
  /**
   * Settles once an answer to this connection's offer is applied (or it
   * closed). The offerer's side of the DTLS handshake waits for it, and so do
   * candidates Chromium gathers through turns of the page's main thread: a
   * long task there before it holds the call back (bench/README.md, browser).
   */
  readonly answered: Promise<void>;
  private markAnswered!: () => void;

  constructor(
    readonly id: string,
    selfId: string,
    /** The call's ICE servers and policy, as the last `joined` or `ice-servers` gave them. */
    private readonly rtcConfig: () => RTCConfiguration,
    private readonly events: PeerEvents,
    /** A connection made ahead (Mesh.useSpare), already configured; else a new one is made. */
    spare: SpareConnection | null = null,
  ) {
    this.polite = selfId > id;
    this.answered = new Promise((resolve) => (this.markAnswered = resolve));
    this.pc = spare?.pc ?? new RTCPeerConnection(rtcConfig());
    this.pc.onnegotiationneeded = () => void this.offer();
    this.pc.onicecandidate = ({ candidate }) => {
      this.events.send(this.id, { candidate: candidate ? (candidate.toJSON() as Record<string, unknown>) : null });
    };
    this.pc.ontrack = ({ track, streams }) => this.events.onTrack(this.id, track, streams[0] ?? new MediaStream([track]));
    this.pc.onconnectionstatechange = () => {
      const state = this.pc.connectionState;
      if (state === 'connected') void preferAudio(this.pc);
      if (state === 'failed' && !this.restartTimer) {
        this.restart();
        this.restartTimer = setInterval(() => this.restart(), RESTART_FAILED_EVERY_MS);
      }
      if (state !== 'failed' && this.restartTimer) {
        clearInterval(this.restartTimer);
        this.restartTimer = null;
      }
      this.events.onState(this.id, state);
    };
  }

  /** An ICE restart, with the call's current servers (useCurrentServers). */
  restart(): void {
    this.useCurrentServers();
    this.pc.restartIce();
  }

  /**
   * The call's current servers, for the next gathering: an ICE restart's,
   * ours or the other side's. The connection's own may hold TURN credentials
   * that expired since it was made (the join page's, or an earlier `joined`'s;
   * the server sends fresh ones during the call, Mesh.renewIceServers), and a
   * new relay needs valid ones. Only here: a change of servers makes the next
   * offer restart ICE (JSEP, "needs-ice-restart"), which a working
   * connection must not do for it.
   */
  private useCurrentServers(): void {
    try {
      this.pc.setConfiguration({ ...this.pc.getConfiguration(), iceServers: this.rtcConfig().iceServers ?? [] });
    } catch {
      // A browser that refuses the change gathers with the servers it has.
    }
  }

  /** The other side can hear us again: an offer it may have missed meanwhile is sent again. */
  resendPendingOffer(): void {
    const d = this.pc.localDescription;
    if (this.pc.signalingState === 'have-local-offer' && d) this.events.send(this.id, { description: { type: d.type, sdp: d.sdp } });
  }

  /** Whether an offer of ours went out a moment ago and its answer may still come. */
  offerInFlight(): boolean {
    return this.pc.signalingState === 'have-local-offer' && Date.now() - this.offeredAt < OFFER_IN_FLIGHT_MS;
  }

  /** Whether `sdp` comes from another connection than the one this one has been talking to. */
  isFromNewConnection(sdp: string | undefined): boolean {
    const known = fingerprintOf(this.pc.remoteDescription?.sdp);
    return known !== null && fingerprintOf(sdp) !== known;
  }

  close(): void {
    if (this.restartTimer) clearInterval(this.restartTimer);
    this.markAnswered();
    this.pc.close();
  }

  /**
   * Makes and sends an offer. The offer of `spare` (this connection's, made
   * ahead and nothing changed since) is sent at once: one that gathered ahead is
   * applied already, with the candidates gathered so far in its SDP, and the
   * later ones follow it; any other is applied after sending, as applying it
   * takes a task that may wait behind the page's rendering, and the answer
   * cannot overtake it (setRemoteDescription runs after it on the
   * connection's operations chain, W3C WebRTC 1.0 §4.4.1.2).
   * `sent`: the spare's offer already went out with the join.
   */
  async offer(spare: SpareConnection | null = null, sent = false): Promise<void> {
    if (spare && spare.gatheredUntil !== null) {
      if (!sent) this.events.send(this.id, { description: { type: 'offer', sdp: spareSdp(spare) } });
      this.offeredAt = Date.now();
      for (const candidate of spare.candidates.slice(spare.inSdp)) this.events.send(this.id, { candidate });
      return;
    }
    try {
      this.makingOffer = true;
      const offer = spare ? await spare.offer : null;
      if (offer) {
        this.offeredAt = Date.now();
        if (!sent) this.events.send(this.id, { description: { type: 'offer', sdp: offer.sdp } });
        try {
          await this.pc.setLocalDescription(offer);
          return;
        } catch {
          // Not applicable after all: a new offer of the usual kind replaces the one sent.
        }
      }
      await this.pc.setLocalDescription();
      const d = this.pc.localDescription!;
      this.offeredAt = Date.now();
      this.events.send(this.id, { description: { type: d.type, sdp: d.sdp } });
    } catch {
      // A newer negotiation supersedes this one.
    } finally {
      this.makingOffer = false;
    }
  }

  async handle(data: SignalData): Promise<void> {
    if ('description' in data) {
      const description = data.description as RTCSessionDescriptionInit;
      const collision = description.type === 'offer' && (this.makingOffer || this.pc.signalingState !== 'stable');
      this.ignoreOffer = !this.polite && collision;
      if (this.ignoreOffer) return;
      // The other side restarts ICE: this side gathers anew too, with servers it can use now.
      if (description.type === 'offer' && restartsIce(this.pc.remoteDescription?.sdp, description.sdp)) this.useCurrentServers();
      await this.pc.setRemoteDescription(description);
      if (description.type === 'answer') this.markAnswered();
      if (description.type === 'offer') {
        await this.pc.setLocalDescription();
        const d = this.pc.localDescription!;
        this.events.send(this.id, { description: { type: d.type, sdp: d.sdp } });
      }
    } else {
      try {
        await this.pc.addIceCandidate((data.candidate ?? undefined) as RTCIceCandidateInit | undefined);
      } catch (error) {
        if (!this.ignoreOffer) throw error;
      }
    }
  }
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
function spareSdp(spare: SpareConnection): string {
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

export class Mesh {
  private peers = new Map<string, Peer>();
  /** Tracks every connection sends: camera and microphone, plus a screen while sharing. */
  private outgoing: Outgoing[] = [];
  /** A connection made ahead (prepareConnection), for the first peer this page calls or answers. */
  private spare: SpareConnection | null = null;

  constructor(
    /** Whose connections these are: a resume as someone else starts over. */
    public selfId: string,
    /** ICE servers (with short-lived TURN credentials) and transport policy, from the server's join reply. */
    private rtcConfig: RTCConfiguration,
    private readonly events: PeerEvents,
  ) {}

  /**
   * Fresh ICE servers from the server (`ice-servers`, its TURN credentials
   * renewed): for the connections made from now on and the next ICE restart
   * of each (Peer.useCurrentServers). Working connections keep theirs: their
   * relays live on after the old credentials expire.
   */
  renewIceServers(iceServers: RTCIceServer[]): void {
    this.rtcConfig = { ...this.rtcConfig, iceServers };
  }

  reset(selfId: string, rtcConfig: RTCConfiguration): void {
    for (const id of [...this.peers.keys()]) this.remove(id);
    this.selfId = selfId;
    this.rtcConfig = rtcConfig;
  }

  /**
   * Back in the call after a dropped connection, as the same participant:
   * connections to peers still there restart ICE unless media still flows on
   * them (only the signaling broke; a restart on a working path was seen to
   * freeze the video for seconds, its first keyframe request lost), new peers
   * are called, peers gone are dropped. `rtcConfig` carries fresh TURN
   * credentials for the restarts.
   */
  resume(peerIds: string[], rtcConfig: RTCConfiguration, flowing: (pc: RTCPeerConnection) => boolean): void {
    this.rtcConfig = rtcConfig;
    for (const id of [...this.peers.keys()]) if (!peerIds.includes(id)) this.remove(id);
    for (const id of peerIds) {
      const peer = this.peers.get(id);
      if (!peer || peer.pc.connectionState === 'closed') {
        this.add(id, true);
        continue;
      }
      if (!flowing(peer.pc)) peer.restart();
    }
  }

  /** The peer came back after its own dropped connection: what it may have missed is sent again. */
  peerBack(id: string): void {
    this.peers.get(id)?.resendPendingOffer();
  }

  /**
   * `peer-present`: the server's nodes can reach each other again, and what
   * went between this peer and us meanwhile may never have arrived (an offer
   * made during the outage, its candidates). A connected peer is left alone
   * (its media flows peer to peer), and so is one whose negotiation completed
   * and whose ICE checks are under way (a relayed path may take seconds; one
   * that fails restarts ICE by itself). Otherwise exactly one side calls again,
   * so that two fresh offers never cross: the impolite one (the smaller peer
   * id, as in perfect negotiation) with a new connection, unless an offer of
   * its own has just gone out; the polite one answers it (a description from
   * a new connection replaces its own, see signal()). The server announces
   * again after a moment, so a call lost the first time goes out again.
   */
  present(id: string): void {
    const pc = this.peers.get(id)?.pc;
    const underWay = pc?.connectionState === 'connected' || (pc?.connectionState === 'connecting' && pc.signalingState === 'stable');
    if (underWay || this.selfId > id || this.peers.get(id)?.offerInFlight()) return;
    this.add(id, true);
  }

  /** The next connection this page makes is the spare (made by prepareConnection), if it still fits then. */
  useSpare(spare: SpareConnection): void {
    this.spare?.pc.close();
    this.spare = spare;
  }

  /**
   * Whether the spare sends exactly the tracks a new connection would (a
   * device switched or a screen shared since it was made: it does not) and
   * has not negotiated; one that gathered ahead, that only its own offer is
   * applied and its time is not up (unless `offered`: its offer went out with
   * the join and has been passed on). One with nothing to send does not fit:
   * a caller then adds receive-only transceivers, which its prepared offer lacks.
   */
  private spareFits(offered = false): boolean {
    const spare = this.spare;
    if (!spare) return false;
    const { pc } = spare;
    const untouched =
      spare.gatheredUntil === null
        ? pc.signalingState === 'stable' && !pc.localDescription
        : pc.signalingState === 'have-local-offer' && spare.made !== null && (offered || Date.now() < spare.gatheredUntil);
    const sent = pc.getSenders().map((sender) => sender.track);
    return untouched && sent.length > 0 && sent.length === this.outgoing.length && this.outgoing.every((o) => sent.includes(o.track));
  }

  /** The SDP of the offer the next connection would make with the spare, if it is made and fits: for the join to carry. */
  spareOffer(): string | null {
    if (!this.spareFits()) return null;
    const spare = this.spare!;
    return spare.gatheredUntil === null ? (spare.made?.sdp ?? null) : spareSdp(spare);
  }

  /**
   * Alone in the call, the first one to come will call this page: a spare
   * that gathered ahead, its offer applied, cannot answer, so a new one that
   * can is made now rather than when the offer comes.
   */
  readyToAnswer(): void {
    if (!this.spare || this.spare.gatheredUntil === null) return;
    this.spare.pc.close();
    this.spare = prepareConnection(this.outgoing);
  }

  /**
   * The spare connection, configured for the call, when it fits (spareFits)
   * and, if it gathered ahead, this page calls (its offer is applied); else
   * null (and it is closed).
   */
  private takeSpare(calling: boolean, offered: boolean): SpareConnection | null {
    const fits = this.spareFits(offered);
    const spare = this.spare;
    this.spare = null;
    if (!spare) return null;
    const { pc } = spare;
    try {
      // It keeps the join page's servers: changing them now would restart ICE with the next offer (JSEP, "needs-ice-restart").
      if (fits && spare.gatheredUntil !== null && calling) return spare;
      // Changing the servers and the transport policy is allowed before gathering starts (W3C WebRTC 1.0, setConfiguration).
      if (fits && spare.gatheredUntil === null) {
        pc.setConfiguration({ ...pc.getConfiguration(), ...this.rtcConfig });
        return spare;
      }
    } catch {
      // A browser that refuses the change gets a fresh connection.
    }
    pc.close();
    return null;
  }

  /**
   * A fresh connection to `id` (an existing one is replaced: the other side starts over too).
   * `offered`: the server passed the spare's offer on to `id` with our join (joined.offeredTo).
   */
  add(id: string, initiate = false, offered = false): Peer {
    this.remove(id);
    // The first connection of the page, calling or answering (one alone in the room keeps its spare for the first to come).
    const spare = this.takeSpare(initiate, offered);
    const peer = new Peer(id, this.selfId, () => this.rtcConfig, this.events, spare);
    if (!spare) for (const { track, stream } of this.outgoing) peer.pc.addTrack(track, stream);
    // With nothing to send, the caller still offers, to receive the other side's media.
    if (initiate && this.outgoing.length === 0) {
      peer.pc.addTransceiver('audio', { direction: 'recvonly' });
      peer.pc.addTransceiver('video', { direction: 'recvonly' });
    }
    this.peers.set(id, peer);
    // The caller offers now rather than in a later task (negotiationneeded): the
    // offer is already on the operations chain when that task runs, so it does not
    // fire again (W3C WebRTC 1.0, "update the negotiation-needed flag").
    if (initiate) void peer.offer(spare, offered && spare !== null);
    return peer;
  }

  remove(id: string): void {
    this.peers.get(id)?.close();
    this.peers.delete(id);
  }

  async signal(from: string, data: SignalData): Promise<void> {
    // An offer can arrive before the news that its sender joined.
    let peer = this.peers.get(from) ?? this.add(from);
    if ('description' in data && peer.isFromNewConnection(data.description.sdp)) {
      if (data.description.type === 'answer') {
        // Our offer reached a connection made after it: start over with one of our own.
        this.add(from, true);
        return;
      }
      peer = this.add(from);
    }
    await peer.handle(data).catch(() => {});
  }

  addTracks(stream: MediaStream): void {
    for (const track of stream.getTracks()) {
      this.outgoing.push({ track, stream });
      for (const peer of this.peers.values()) peer.pc.addTrack(track, stream);
    }
  }

  removeTracks(stream: MediaStream): void {
    const ids = new Set(stream.getTracks().map((t) => t.id));
    this.outgoing = this.outgoing.filter((o) => !ids.has(o.track.id));
    for (const peer of this.peers.values()) {
      for (const sender of peer.pc.getSenders()) if (sender.track && ids.has(sender.track.id)) peer.pc.removeTrack(sender);
    }
  }

  /** Sends `next` instead of `previous` to everyone, without renegotiating (a camera or microphone switched). */
  async replaceTrack(previous: MediaStreamTrack, next: MediaStreamTrack): Promise<void> {
    for (const outgoing of this.outgoing) if (outgoing.track === previous) outgoing.track = next;
    const senders = [...this.peers.values()].flatMap((peer) => peer.pc.getSenders()).filter((sender) => sender.track === previous);
    await Promise.all(senders.map((sender) => sender.replaceTrack(next).catch(() => {})));
  }

  isConnected(id: string): boolean {
    return this.peers.get(id)?.pc.connectionState === 'connected';
  }

  /** The connection to each peer, by peer id. */
  byPeer(): [string, RTCPeerConnection][] {
    return [...this.peers.entries()].map(([id, p]) => [id, p.pc]);
  }

  close(): void {
    for (const id of [...this.peers.keys()]) this.remove(id);
    this.spare?.pc.close();
    this.spare = null;
  }
}

// The call's peer connections: one per other participant (peer-connection.ts,
// perfect negotiation), the tracks they all send, and the connection made
// ahead (spare-connection.ts) for the first of them.
//
// Recovering (docs/call.md, "Recovering"): after a participant resumes, it
// restarts ICE on every connection it kept whose media stopped. A description
// whose DTLS fingerprint differs from the one a connection knows comes from a
// new connection on the other side (the page was reloaded, or it gave its old
// one up): ours is replaced by a fresh one, so both sides start over together.
import type { SignalData } from '../../src/shared/protocol.js';
import { Peer, type PeerEvents } from './peer-connection.js';
import { prepareConnection, spareSdp, type Outgoing, type SpareConnection } from './spare-connection.js';

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
    } else if ('description' in data && data.description.type === 'offer' && peer.answersOnFreshConnection()) {
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

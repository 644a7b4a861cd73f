// One RTCPeerConnection per other participant, negotiated with the
// "perfect negotiation" pattern (W3C WebRTC 1.0, §10.7 example): both sides
// may offer at any time; on a collision the polite side yields. Politeness is
// decided by comparing the two public peer ids, so both sides agree.
import type { SignalData } from '../../src/realtime/protocol.js';

export interface PeerEvents {
  send(to: string, data: SignalData): void;
  onTrack(peerId: string, track: MediaStreamTrack, stream: MediaStream): void;
  onState(peerId: string, state: RTCPeerConnectionState): void;
}

class Peer {
  readonly pc: RTCPeerConnection;
  private makingOffer = false;
  private ignoreOffer = false;
  private readonly polite: boolean;

  constructor(
    readonly id: string,
    selfId: string,
    rtcConfig: RTCConfiguration,
    private readonly events: PeerEvents,
  ) {
    this.polite = selfId > id;
    this.pc = new RTCPeerConnection(rtcConfig);
    this.pc.onnegotiationneeded = () => void this.offer();
    this.pc.onicecandidate = ({ candidate }) => this.events.send(this.id, { candidate: candidate ? (candidate.toJSON() as Record<string, unknown>) : null });
    this.pc.ontrack = ({ track, streams }) => this.events.onTrack(this.id, track, streams[0] ?? new MediaStream([track]));
    this.pc.onconnectionstatechange = () => {
      if (this.pc.connectionState === 'failed') this.pc.restartIce();
      this.events.onState(this.id, this.pc.connectionState);
    };
  }

  async offer(): Promise<void> {
    try {
      this.makingOffer = true;
      await this.pc.setLocalDescription();
      const d = this.pc.localDescription!;
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
      await this.pc.setRemoteDescription(description);
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

export class Mesh {
  private peers = new Map<string, Peer>();
  /** Tracks every connection sends: camera and microphone, plus a screen while sharing. */
  private outgoing: { track: MediaStreamTrack; stream: MediaStream }[] = [];

  constructor(
    private selfId: string,
    /** ICE servers (with short-lived TURN credentials) and transport policy, from the server's join reply. */
    private rtcConfig: RTCConfiguration,
    private readonly events: PeerEvents,
  ) {}

  reset(selfId: string, rtcConfig: RTCConfiguration): void {
    for (const id of [...this.peers.keys()]) this.remove(id);
    this.selfId = selfId;
    this.rtcConfig = rtcConfig;
  }

  /** A fresh connection to `id` (an existing one is replaced: the other side starts over too). */
  add(id: string, initiate = false): Peer {
    this.remove(id);
    const peer = new Peer(id, this.selfId, this.rtcConfig, this.events);
    for (const { track, stream } of this.outgoing) peer.pc.addTrack(track, stream);
    // With nothing to send, the caller still offers, to receive the other side's media.
    if (initiate && this.outgoing.length === 0) {
      peer.pc.addTransceiver('audio', { direction: 'recvonly' });
      peer.pc.addTransceiver('video', { direction: 'recvonly' });
    }
    this.peers.set(id, peer);
    // The caller offers now rather than in a later task (negotiationneeded): the
    // offer is already on the operations chain when that task runs, so it does not
    // fire again (W3C WebRTC 1.0, "update the negotiation-needed flag").
    if (initiate) void peer.offer();
    return peer;
  }

  remove(id: string): void {
    this.peers.get(id)?.pc.close();
    this.peers.delete(id);
  }

  async signal(from: string, data: SignalData): Promise<void> {
    // An offer can arrive before the news that its sender joined.
    const peer = this.peers.get(from) ?? this.add(from);
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

  connections(): RTCPeerConnection[] {
    return [...this.peers.values()].map((p) => p.pc);
  }

  close(): void {
    for (const id of [...this.peers.keys()]) this.remove(id);
  }
}

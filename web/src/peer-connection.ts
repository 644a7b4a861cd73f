// One peer's RTCPeerConnection, negotiated with the "perfect negotiation"
// pattern (W3C WebRTC 1.0, §10.7 example): both sides may offer at any time;
// on a collision the polite side yields. Politeness is decided by comparing
// the two public peer ids, so both sides agree. A connection that fails
// restarts ICE, again every few seconds while it stays failed (docs/call.md,
// "Recovering"). The mesh of them all is mesh.ts.
import type { SignalData } from '../../src/shared/protocol.js';
import { preferAudio } from './audio-priority.js';
import { spareSdp, type SpareConnection } from './spare-connection.js';

/** While a connection stays failed, ICE is restarted this often (the first time at once). */
const RESTART_FAILED_EVERY_MS = 4000;
/** An offer of ours younger than this may still be answered: a repeated announcement leaves it be. */
const OFFER_IN_FLIGHT_MS = 1500;

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

export class Peer {
  readonly pc: RTCPeerConnection;
  private makingOffer = false;
  private ignoreOffer = false;
  /**
   * An answer is being applied: an offer that comes meanwhile follows it on
   * the connection's operations chain, so it is no collision although the
   * state still says `have-local-offer` (W3C WebRTC 1.0, §10.7 example,
   * isSettingRemoteAnswerPending). Without it the impolite side dropped the
   * other side's ICE restart that came right behind the answer to its own,
   * and the connection stayed `disconnected` for good (seen after a TURN
   * outage under `npm run test:under-load`: test/browser/turn-relay.test.ts).
   */
  private settingRemoteAnswer = false;
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

  /**
   * Whether an offer that crosses this connection's own first one (nothing
   * from the other side applied yet) is better answered on a fresh
   * connection, on the polite side: perfect negotiation would roll our offer
   * back and answer on this one, and Chromium, rolled back while it gathers
   * that offer's first candidates, then never gathers any for the answer: the
   * connection stays `new` on both sides for good. Seen when everyone in a
   * call reloads at once (each new page calls all the others, whose new pages
   * call it too: test/browser/reload-together.test.ts).
   */
  answersOnFreshConnection(): boolean {
    return this.polite && !this.pc.remoteDescription && (this.makingOffer || this.pc.signalingState === 'have-local-offer');
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
      const readyForOffer = !this.makingOffer && (this.pc.signalingState === 'stable' || this.settingRemoteAnswer);
      const collision = description.type === 'offer' && !readyForOffer;
      this.ignoreOffer = !this.polite && collision;
      if (this.ignoreOffer) return;
      // The other side restarts ICE: this side gathers anew too, with servers it can use now.
      if (description.type === 'offer' && restartsIce(this.pc.remoteDescription?.sdp, description.sdp)) this.useCurrentServers();
      this.settingRemoteAnswer = description.type === 'answer';
      try {
        await this.pc.setRemoteDescription(description);
      } finally {
        this.settingRemoteAnswer = false;
      }
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

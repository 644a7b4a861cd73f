// What the page tells its person about the call's connections (docs/call.md,
// "Recovering"): the banner while its own connection is being re-established
// (or a probe of it goes unanswered), a notice on a peer's tile while that
// peer's media is gone and our own connection is fine, the quality bars, and
// a word when its own link is too thin for video.
import type { Quality } from './quality.js';
import type { RemotePeers } from './remote-peers.js';
import { t } from '../i18n.js';

/** Below this estimated send bitrate to every peer, the person is told that video gives way to sound. */
export const WEAK_LINK_KBPS = 150;
/**
 * Once told, the person is told it is over only above this: an estimate
 * hovering around 150 kbit/s on a thin link would otherwise make the notice
 * come and go every sample.
 */
export const LINK_RECOVERED_KBPS = 250;
/**
 * A queue this long in front of our own link (the signaling's round trip over
 * its shortest, Signaling.queueMs) says that the thin link is ours: pings to
 * the server wait behind our media. Jitter on a mobile link stays well under it.
 */
export const OWN_LINK_QUEUE_MS = 100;
/** Back in the call but no media yet after this long: the banner goes, the tiles say what is still missing. */
const BACK_AT_THE_LATEST_MS = 10_000;

export interface ConnectionHealthOptions {
  setBanner(on: boolean): void;
  say(message: string): void;
  /** What the status line shows now (other messages share it). */
  saying(): string;
  peers: Pick<RemotePeers, 'connectionLost' | 'quality'>;
  /** The peer connections by peer id. */
  connections(): [string, RTCPeerConnection][];
  /** Whether the signaling connection is open and was heard from lately. */
  signalingHealthy(): boolean;
  /** The queue in front of our own link, in milliseconds (null while unknown). */
  ownQueueMs(): number | null;
  /** Asks the server whether our own connection is fine (replaced if it does not answer). */
  probe(): void;
}

export type ConnectionHealth = ReturnType<typeof createConnectionHealth>;

export function createConnectionHealth(options: ConnectionHealthOptions) {
  const { peers } = options;
  /** Our signaling connection dropped and the call is not back yet. */
  let down = false;
  /** Joined again since the drop: the call is back as soon as media flows. */
  let rejoined = false;
  /** A probe of our connection has gone unanswered for a moment. */
  let inDoubt = false;
  let backTimer: ReturnType<typeof setTimeout> | null = null;
  let weakLink = false;
  /** The weak link is known to be ours (until it is no longer weak). */
  let ownLink = false;
  const sendKbps = new Map<string, number | null>();

  function showBanner() {
    options.setBanner(down || inDoubt);
  }

  function back() {
    down = false;
    if (backTimer) clearTimeout(backTimer);
    backTimer = null;
    showBanner();
  }

  return {
    /** Our signaling connection dropped; a new one is on its way. */
    lost(): void {
      down = true;
      rejoined = false;
      if (backTimer) clearTimeout(backTimer);
      backTimer = null;
      showBanner();
    },

    doubt(on: boolean): void {
      inDoubt = on;
      showBanner();
    },

    /** Joined again after a drop: back now if media flows (or there is nobody to connect to), else when it does. */
    rejoined(): void {
      if (!down) return;
      rejoined = true;
      const connections = options.connections();
      if (connections.length === 0 || connections.some(([, pc]) => pc.connectionState === 'connected')) return back();
      backTimer ??= setTimeout(back, BACK_AT_THE_LATEST_MS);
    },

    /** Media from this peer flows (again). */
    peerFlowing(peerId: string): void {
      peers.connectionLost(peerId, false);
      if (down && rejoined && options.signalingHealthy()) back();
    },

    /**
     * Media from this peer is gone. Its tile says so unless our own connection
     * is what broke (the banner says that); either way, our connection is checked.
     */
    peerLost(peerId: string): void {
      if (!down && !inDoubt && options.signalingHealthy()) peers.connectionLost(peerId, true);
      options.probe();
    },

    /**
     * A quality sample of the connection to this peer. Video gives way to sound when every
     * peer's send estimate is low. The notice says the link is ours when it knows: two peers
     * or more are all low (what they share is our link), or our pings to the server queue.
     * Else the thin link may be at the other end (which lowers our estimate as much), and
     * the notice blames nobody. Once ours, ours until the link is no longer weak.
     */
    quality(peerId: string, quality: Quality): void {
      peers.quality(peerId, quality);
      sendKbps.set(peerId, quality.sendKbps);
      const estimates = options.connections().map(([id]) => sendKbps.get(id));
      const limit = weakLink ? LINK_RECOVERED_KBPS : WEAK_LINK_KBPS;
      weakLink = estimates.length > 0 && estimates.every((kbps) => typeof kbps === 'number' && kbps < limit);
      if (!weakLink) ownLink = false;
      else if (estimates.length > 1 || (options.ownQueueMs() ?? 0) >= OWN_LINK_QUEUE_MS) ownLink = true;
      const [yours, between] = [t('connection.weakLink'), t('connection.weakBetween')];
      const notice = ownLink ? yours : between;
      // The status line also carries passing messages ("Reconnected.", "Link copied."): while
      // the link stays weak the notice comes back after them, and its end clears only the notice.
      const saying = options.saying();
      if (weakLink && saying !== notice) options.say(notice);
      else if (!weakLink && (saying === yours || saying === between)) options.say('');
    },

    stop(): void {
      if (backTimer) clearTimeout(backTimer);
      options.setBanner(false);
    },
  };
}

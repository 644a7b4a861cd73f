// What the page does when its call's media path changes (docs/design.md,
// "Group calls through an SFU"), for sfu-switch.ts, which decides when:
// going up, the page first lets its peer-to-peer connections carry pictures
// (the newcomer's first pictures come that way), then its SFU path sends (started,
// or switched on where it was warm), and the handover keeps each peer-to-peer
// connection until that peer comes through the SFU; going down, the SFU path
// goes back to warm or stops and the mesh calls again; on the mesh, the SFU
// path warms one below the threshold (Warm path) and stops further below.
import type { Mesh } from '../mesh.js';
import type { Handover } from './handover.js';
import type { MediaPath } from './path-choice.js';
import type { SfuCall } from './sfu-call.js';

/**
 * How long the call stays one below the threshold before the page warms its SFU path: after the
 * peer-to-peer join, whose first frame it would otherwise slow (the page sets up its Janus connections then).
 */
export const WARM_AFTER_MS = 2_000;
/**
 * Going up, every page (the newcomer who brought the room to the threshold, and those already there) waits until its
 * peer-to-peer connections to the others carry pictures, at most this long, before its SFU path sends: the
 * newcomer's first pictures come peer to peer, and setting up publications and subscriptions on the same cores at
 * that moment slowed them (bench/README.md, "Issue 41: the third person's first frame, mesh first"). Nobody waits
 * for a picture meanwhile: everyone shows everyone peer to peer. Checked every MESH_FIRST_CHECK_MS.
 */
export const MESH_FIRST_MS = 1_000;
const MESH_FIRST_CHECK_MS = 50;

/** Whether the connection is up and has decoded a video frame. */
async function decodesVideo(pc: RTCPeerConnection | undefined): Promise<boolean> {
  if (pc?.connectionState !== 'connected') return false;
  let decoded = false;
  (await pc.getStats().catch(() => new Map())).forEach((s) => {
    if (s.type === 'inbound-rtp' && s.kind === 'video' && s.framesDecoded > 0) decoded = true;
  });
  return decoded;
}

export interface PathMovesOptions {
  call: SfuCall;
  handover: Handover;
  mesh: Pick<Mesh, 'add' | 'present' | 'byPeer'>;
  /** The other participants in the call now. */
  others(): string[];
  /** The path chosen now (null before a join with an SFU). */
  path(): MediaPath | null;
  /** On the mesh, one below the threshold, with SFU_WARM on: the SFU path is kept warm. */
  warmWanted(): boolean;
}

export function createPathMoves(options: PathMovesOptions) {
  const { call, handover, mesh } = options;
  let warmTimer: ReturnType<typeof setTimeout> | null = null;
  /** Going up, the SFU path's sending waits for the peer-to-peer connections (sendAfterMesh). */
  let meshFirst: ReturnType<typeof setInterval> | null = null;

  const cancelWarm = () => {
    if (warmTimer !== null) clearTimeout(warmTimer);
    warmTimer = null;
  };
  const cancelMeshFirst = () => {
    if (meshFirst !== null) clearInterval(meshFirst);
    meshFirst = null;
  };
  // Janus refused or could not be reached: the next change of people tries again.
  const start = (send: boolean) => call.start(send).catch(() => call.stop());

  /**
   * The SFU path sends (switched on where warm, started otherwise) once the peer-to-peer connections to `peerIds`
   * carry pictures (decoded a video frame), failed, or went with their peer, at most MESH_FIRST_MS from now. A page
   * already there may not have the newcomer's connection yet: the newcomer's offer is on its way. Connected is not
   * enough: the first frames come some 100 ms later, and a publication set up meanwhile slowed them.
   */
  function sendAfterMesh(peerIds: string[]): void {
    cancelMeshFirst();
    const until = Date.now() + MESH_FIRST_MS;
    const send = () => {
      cancelMeshFirst();
      if (options.path() !== 'sfu') return;
      if (call.active) call.send(true);
      else void start(true);
    };
    // A peer with no connection yet is waited for unless it left: an offer is on its way (the newcomer's to those
    // already there), or the newcomer makes its connections just after its joined, whose peers its list of the
    // others may show later still.
    const seen = new Set<string>();
    const waiting = () => {
      const connections = new Map(mesh.byPeer());
      const here = new Set(options.others());
      for (const id of here) seen.add(id);
      return peerIds.filter((id) => {
        const pc = connections.get(id);
        return pc ? !['failed', 'closed'].includes(pc.connectionState) : here.has(id) || !seen.has(id);
      });
    };
    if (!waiting().length) return send();
    let checking = false;
    const timer = setInterval(async () => {
      if (checking) return;
      checking = true;
      const connections = new Map(mesh.byPeer());
      const pictured = await Promise.all(waiting().map((id) => decodesVideo(connections.get(id)))).finally(() => (checking = false));
      // Still this wait (not cancelled, nor replaced by another, meanwhile)?
      if (meshFirst === timer && (pictured.every(Boolean) || Date.now() >= until)) send();
    }, MESH_FIRST_CHECK_MS);
    meshFirst = timer;
  }

  return {
    /** On the mesh, the SFU path warms (after WARM_AFTER_MS) or stops, as the number of people says. */
    settle(): void {
      if (options.path() !== 'mesh') return;
      if (!options.warmWanted()) {
        cancelWarm();
        call.stop();
      } else if (!call.active && warmTimer === null) {
        warmTimer = setTimeout(() => {
          warmTimer = null;
          if (options.warmWanted()) void start(false);
        }, WARM_AFTER_MS);
      }
    },

    /**
     * The path went up. `arriving`: this page is the newcomer who brought the room to the threshold, calling these
     * peers peer to peer; otherwise the handover covers everyone else (the newcomer included). `straight`: this page
     * goes to the SFU from its join (the fourth person and later, a call known to be recorded, a resume), with no
     * peer-to-peer connection to wait for.
     */
    up(arriving: string[] | null, straight = false): void {
      cancelWarm();
      const peers = arriving ?? options.others();
      handover.begin(peers);
      sendAfterMesh(straight ? [] : peers);
    },

    down(): void {
      cancelMeshFirst();
      // Going down in the middle of the move: a connection closed here may still carry this page's picture to
      // its peer, which kept its side open; this page calls that peer (both calling is perfect negotiation's glare).
      const closed = handover.end();
      if (options.warmWanted()) call.send(false);
      else call.stop();
      for (const id of options.others()) {
        if (closed.includes(id)) mesh.add(id, true);
        else mesh.present(id);
      }
    },

    stop(): void {
      cancelWarm();
      cancelMeshFirst();
    },
  };
}

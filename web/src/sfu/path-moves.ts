// What the page does when its call's media path changes (docs/design.md,
// "Group calls through an SFU"), for sfu-switch.ts, which decides when:
// going up, the SFU path sends (started, or switched on where it was warm)
// and the handover keeps each peer-to-peer connection until that peer comes
// through the SFU; going down, the SFU path goes back to warm or stops and
// the mesh calls again; on the mesh, the SFU path warms one below the
// threshold (Warm path) and stops further below.
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
 * The newcomer at the threshold of a warm call starts its own SFU path once its peer-to-peer connections to those
 * already there are up, at most this long after: its first pictures come peer to peer, and its publication's
 * setup on the same cores slowed them (1.4x a two-person join started at once, 1.1-1.3x started this way:
 * bench/README.md, "Issue 41: the third person's first frame, warm"). Checked every NEWCOMER_CHECK_MS.
 */
const NEWCOMER_WAIT_MS = 1_000;
const NEWCOMER_CHECK_MS = 50;

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
  /** A newcomer's SFU start waiting for its peer-to-peer connections (up). */
  let newcomerWait: ReturnType<typeof setInterval> | null = null;

  const cancelWarm = () => {
    if (warmTimer !== null) clearTimeout(warmTimer);
    warmTimer = null;
  };
  const cancelNewcomerWait = () => {
    if (newcomerWait !== null) clearInterval(newcomerWait);
    newcomerWait = null;
  };
  // Janus refused or could not be reached: the next change of people tries again.
  const start = (send: boolean) => call.start(send).catch(() => call.stop());

  /** Starts the SFU path once the peer-to-peer connections to `peerIds` are up (or gone), at most NEWCOMER_WAIT_MS from now. */
  function startAfterMesh(peerIds: string[]): void {
    const until = Date.now() + NEWCOMER_WAIT_MS;
    newcomerWait = setInterval(() => {
      const connections = new Map(mesh.byPeer());
      const settled = peerIds.every((id) => ['connected', 'failed', 'closed', undefined].includes(connections.get(id)?.connectionState));
      if (!settled && Date.now() < until) return;
      cancelNewcomerWait();
      if (options.path() === 'sfu' && !call.active) void start(true);
    }, NEWCOMER_CHECK_MS);
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
     * peers peer to peer; `warm`: the others keep their SFU path warm (most likely warmed WARM_AFTER_MS after the
     * second came), so they only switch their cameras on, and this page's own SFU path waits for its first pictures.
     */
    up(arriving: string[] | null, warm: boolean): void {
      cancelWarm();
      handover.begin(arriving ?? options.others());
      if (call.active) call.send(true);
      else if (arriving && warm) startAfterMesh(arriving);
      else void start(true);
    },

    down(): void {
      cancelNewcomerWait();
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
      cancelNewcomerWait();
    },
  };
}

// Moving a call from the mesh to the SFU without a gap (docs/design.md,
// "Group calls through an SFU"), make-before-break as Jitsi moves a call from
// peer to peer to its bridge: when the path goes up, each peer's peer-to-peer
// connection stays while the SFU path comes up. Once that peer's media comes
// through the SFU (its camera decoded frames there), its tile takes the SFU's
// stream (one element plays a peer's sound: never both paths at once) and this
// page tells the peer so (`signal` {description: {type: 'moved-to-sfu'}}).
// The connection closes once both sides moved, so that neither side's picture
// stops while the other still waits for its own; a peer whose media has not
// come through the SFU within HANDOVER_LIMIT_MS is moved anyway (its
// publication failed, or this page's SFU path did not come up: as before this
// handover, the page then waits for the SFU path, which tries again every second).

/** The longest a peer's peer-to-peer connection stays once the call went up to the SFU. */
export const HANDOVER_LIMIT_MS = 10_000;
/** How often a peer still on the mesh is checked for its media through the SFU. */
export const HANDOVER_CHECK_MS = 100;
/** The description type of the `signal` that tells a peer this page receives it through the SFU now. */
export const MOVED_TO_SFU = 'moved-to-sfu';

export interface HandoverOptions {
  /** Whether this peer's media comes through the SFU now, ready to show. */
  arriving(peerId: string): Promise<boolean>;
  /** Shows in the peer's tile what the SFU path brought of it. */
  show(peerId: string): void;
  /** Tells the peer that this page receives it through the SFU now. */
  tell(peerId: string): void;
  /** Closes the peer-to-peer connection to the peer. */
  close(peerId: string): void;
}

export interface Handover {
  /** The path went up: these peers' peer-to-peer connections stay until their media comes through the SFU. */
  begin(peerIds: string[]): void;
  /** Whether the peer's tile still shows what comes peer to peer (its tracks, states and stats are the ones that count). */
  onMesh(peerId: string): boolean;
  /** Whether the peer-to-peer connection to the peer is kept (its signals are taken). */
  open(peerId: string): boolean;
  /** The peer receives this page through the SFU now. */
  told(peerId: string): void;
  /**
   * Stops (the path goes down, the call ends): connections to peers already shown through the SFU close; returns
   * those peers. Such a peer may still show this page peer to peer (it had not said it moved), its own connection
   * open and looking connected: this page must call it again, whichever side Mesh.present would pick.
   */
  end(): string[];
}

interface Moving {
  /** The tile shows the SFU path's stream. */
  shown: boolean;
  /** The peer said it shows ours. */
  told: boolean;
}

export function createHandover(options: HandoverOptions, limitMs = HANDOVER_LIMIT_MS, checkMs = HANDOVER_CHECK_MS): Handover {
  const moving = new Map<string, Moving>();
  let checker: ReturnType<typeof setInterval> | null = null;
  let limit: ReturnType<typeof setTimeout> | null = null;
  let checking = false;

  const stopTimers = () => {
    if (checker !== null) clearInterval(checker);
    if (limit !== null) clearTimeout(limit);
    checker = limit = null;
  };
  const closeNow = (peerId: string) => {
    moving.delete(peerId);
    options.close(peerId);
    if (!moving.size) stopTimers();
  };
  const show = (peerId: string, state: Moving) => {
    state.shown = true;
    options.show(peerId);
    options.tell(peerId);
    if (state.told) closeNow(peerId);
  };

  async function check(): Promise<void> {
    if (checking) return;
    checking = true;
    try {
      for (const [peerId, state] of [...moving]) {
        if (state.shown || !(await options.arriving(peerId).catch(() => false))) continue;
        // Still the same move (not ended or limited meanwhile)?
        if (moving.get(peerId) === state && !state.shown) show(peerId, state);
      }
    } finally {
      checking = false;
    }
  }

  return {
    begin(peerIds) {
      for (const peerId of peerIds) if (!moving.has(peerId)) moving.set(peerId, { shown: false, told: false });
      if (!moving.size) return;
      checker ??= setInterval(() => void check(), checkMs);
      if (limit !== null) clearTimeout(limit);
      limit = setTimeout(() => {
        for (const [peerId, state] of [...moving]) {
          if (!state.shown) show(peerId, state);
          if (moving.has(peerId)) closeNow(peerId);
        }
      }, limitMs);
    },
    onMesh: (peerId) => moving.has(peerId) && !moving.get(peerId)!.shown,
    open: (peerId) => moving.has(peerId),
    told(peerId) {
      const state = moving.get(peerId);
      if (!state) return;
      state.told = true;
      if (state.shown) closeNow(peerId);
    },
    end() {
      stopTimers();
      const closed = [...moving].filter(([, state]) => state.shown).map(([peerId]) => peerId);
      for (const peerId of closed) options.close(peerId);
      moving.clear();
      return closed;
    },
  };
}

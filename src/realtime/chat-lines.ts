// Chat lines between nodes (docs/design.md, "Chat lines across nodes").
//
// A chat line is acknowledged once Redis took it. Redis hands it only to the
// nodes subscribed at that moment: one whose connection to Redis was lost and
// is not back yet (after an outage the nodes reconnect up to a retry interval
// apart, or one node may be cut off alone) never gets it from there. So the
// node that sent a line keeps it (`kept`) for KEEP_MS, and a node that is back
// asks its rooms for the lines it missed (a catch-up request on the room's
// channel); every node there sends its kept lines of that room again, and the
// receiving nodes drop those they delivered already (`seen`). Each line is
// therefore delivered once by each node, however often it is sent.
import type { SignalEnvelope } from '../domain/buses/signal-bus.js';

/** How long the sending node keeps a line for nodes that come back: far beyond a reconnection, minutes of a node cut off alone. */
export const KEEP_MS = 5 * 60_000;
/** Lines kept per room at most (a participant sends one a second: 200 are minutes of a busy room). */
export const KEEP_PER_ROOM = 200;
/**
 * A line sent again is delivered only to a room whose sessions on this node
 * could have seen it first: one older than the room's first session here, by
 * more than the clocks of two nodes may differ, was sent before anyone here joined.
 */
export const CLOCK_SKEW_MS = 30_000;

/** The lines this node sent, by room, for the nodes that missed them. */
export function createKeptLines(now: () => number = Date.now) {
  const rooms = new Map<number, SignalEnvelope[]>();
  let sweptAt = now();

  function prune(roomId: number, lines: SignalEnvelope[]) {
    const oldest = now() - KEEP_MS;
    while (lines.length > 0 && (lines.length > KEEP_PER_ROOM || (lines[0]!.at ?? 0) < oldest)) lines.shift();
    if (lines.length === 0) rooms.delete(roomId);
  }

  return {
    /** A line Redis took from this node. Once a minute, also lets go of rooms whose lines all expired. */
    keep(roomId: number, envelope: SignalEnvelope): void {
      const lines = rooms.get(roomId) ?? [];
      rooms.set(roomId, lines);
      lines.push(envelope);
      prune(roomId, lines);
      if (now() - sweptAt < 60_000) return;
      sweptAt = now();
      for (const [id, kept] of rooms) prune(id, kept);
    },

    /** The lines of the room still kept, oldest first. */
    of(roomId: number): SignalEnvelope[] {
      const lines = rooms.get(roomId);
      if (!lines) return [];
      prune(roomId, lines);
      return [...lines];
    },

    get rooms(): number {
      return rooms.size;
    },
  };
}

/** The lines a room's sessions on this node were handed, for KEEP_MS: a line sent again is not delivered twice. */
export function createSeenLines(now: () => number = Date.now) {
  const since = now();
  const seen = new Map<string, number>();
  return {
    /** Whether to deliver this line here: the first time it arrives, and not from before anyone here was in the room. */
    firstTime(envelope: SignalEnvelope): boolean {
      if (envelope.lineId === undefined) return true;
      if (seen.has(envelope.lineId) || (envelope.at ?? 0) < since - CLOCK_SKEW_MS) return false;
      const at = now();
      seen.set(envelope.lineId, at);
      // Oldest first (a Map keeps insertion order): a line kept nowhere any more cannot come again.
      for (const [id, when] of seen) {
        if (when >= at - KEEP_MS - CLOCK_SKEW_MS) break;
        seen.delete(id);
      }
      return true;
    },
  };
}

export type KeptLines = ReturnType<typeof createKeptLines>;
export type SeenLines = ReturnType<typeof createSeenLines>;

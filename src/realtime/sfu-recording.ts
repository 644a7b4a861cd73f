// Which publications of this node's participants the SFU records (docs/design.md, "Recording with
// consent"): a participant who consented to the room's recording is recorded
// as `<base>-<kind>` (base `<rawDir>/<peerId>`, kind camera or screen), each
// publication it has now and each it makes later (a screen share, a
// publication made again after an SFU restart), until told otherwise. Kept
// apart from sfu-calls.ts, which asks it at each publication.
import type { Publisher } from '../sfu/video-room.js';
import type { SfuKind } from '../shared/protocol.js';
import type { Session } from './session.js';

export function createSfuRecording() {
  /** Whose publications are recorded, and under which base: known before the page publishes too. */
  const bases = new Map<Session, string>();

  return {
    /** A publication was made: recorded if its participant is. */
    async published(session: Session, kind: SfuKind, publisher: Publisher): Promise<void> {
      const base = bases.get(session);
      if (base) await publisher.record(true, `${base}-${kind}`);
    },
    /** Records the participant under `base` from now on (null: no more). Returns what to do to its publications now, or null when nothing changed. */
    set(session: Session, base: string | null): ((publications: Map<SfuKind, Publisher>) => Promise<void>) | null {
      const was = bases.get(session) ?? null;
      if (was === base) return null;
      if (base) bases.set(session, base);
      else bases.delete(session);
      return async (publications) => {
        for (const [kind, publisher] of publications) await (base ? publisher.record(true, `${base}-${kind}`) : publisher.record(false));
      };
    },
    /** The participant's connection is gone. */
    forget(session: Session): void {
      bases.delete(session);
    },
  };
}

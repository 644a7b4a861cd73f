// Which path the call's media takes (docs/design.md, "Group calls through an
// SFU"): peer to peer below the server's threshold, through the SFU from it.
// Up at once when the threshold is reached (a third person must not make
// everyone upload twice), down only after the room stayed below it for a
// while, so that someone reloading or dropping for a moment does not send
// everyone back and forth. Every page counts the same people, so the pages
// of a call choose alike.

export type MediaPath = 'mesh' | 'sfu';

/** How long a room stays below the threshold before it goes back to peer to peer. */
export const BACK_TO_MESH_AFTER_MS = 8_000;

export interface PathChoice {
  readonly path: MediaPath;
  /** The number of people in the call now, this page included. */
  count(people: number): void;
  /** Goes down now (the other side went back to peer to peer already), if below the threshold. */
  downNow(): void;
  /**
   * The call is recorded (docs/design.md, "Recording with consent"): the SFU records, so the call goes
   * through it whatever the number of people, and may go down again (after the wait) once it is not.
   */
  recording(on: boolean): void;
  stop(): void;
}

export function createPathChoice(minParticipants: number, onChange: (path: MediaPath) => void, backAfterMs = BACK_TO_MESH_AFTER_MS): PathChoice {
  let path: MediaPath = 'mesh';
  let people = 1;
  let recorded = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const cancel = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  const go = (next: MediaPath) => {
    cancel();
    if (path === next) return;
    path = next;
    onChange(next);
  };
  return {
    get path() {
      return path;
    },
    count(n) {
      people = n;
      if (n >= minParticipants || recorded) return go('sfu');
      if (path === 'sfu' && timer === null) timer = setTimeout(() => go('mesh'), backAfterMs);
    },
    downNow() {
      if (people < minParticipants && !recorded) go('mesh');
    },
    recording(on) {
      recorded = on;
      this.count(people);
    },
    stop: cancel,
  };
}

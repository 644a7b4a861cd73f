// The calls process runs a few nice steps ahead of the main process, where
// the system allows it (docs/design.md#the-calls-process). Both share the
// node's cores: under an API burst the main process's event loop always has
// work, and a calls process woken by a signal would wait for the rest of its
// slice of the core; ahead of it, the wait is shorter. The calls process's own
// work is small (a relayed message, a join), so the API keeps the core
// whenever no call needs it. Figures: bench/README.md, "the calls process
// ahead of the API".
import fs from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** How many nice steps ahead: five is three times the main process's share of a contended core, and the API keeps a quarter of it in a signaling storm. */
export const CALLS_NICE_STEPS = 5;

export type PriorityOutcome =
  | { raised: true; from: number; nice: number }
  | { raised: false; nice: number; reason: string };

/**
 * Every thread of this process to CALLS_NICE_STEPS below the nice value it
 * was started with (the main process's). Raising a priority needs
 * CAP_SYS_NICE or a nice limit that allows it (RLIMIT_NICE: systemd's
 * `LimitNICE=`); without either it is refused, and nothing changes.
 */
export function raiseCallsPriority(): PriorityOutcome {
  const from = getPriority(0);
  const nice = Math.max(-20, from - CALLS_NICE_STEPS);
  try {
    // On Linux a nice value is a thread's: each of V8's threads (a scavenge's
    // helpers) too. Threads started later inherit the event loop's.
    if (process.platform !== 'linux') setPriority(0, nice);
    else for (const thread of fs.readdirSync('/proc/self/task')) setThreadPriority(Number(thread), nice);
    return { raised: true, from, nice };
  } catch (error) {
    return { raised: false, nice: from, reason: (error as Error).message };
  }
}

function setThreadPriority(thread: number, nice: number): void {
  try {
    setPriority(thread, nice);
  } catch (error) {
    // A thread that ended since the listing; a refusal is the caller's. (Node's
    // system errors carry the errno's name in `info`.)
    if ((error as { info?: { code?: string } }).info?.code !== 'ESRCH') throw error;
  }
}

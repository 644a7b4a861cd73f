// CPU time, for benchmarks that compare variants on a shared machine: under
// a load of other people's work a sequential operation's wall time is mostly
// waiting for a core (each round trip to PostgreSQL waits to be scheduled),
// which hides a cost of tens of microseconds, while the CPU it uses moves much
// less. What a server can do per second is bounded by that CPU.
import fs from 'node:fs';

/** Milliseconds of CPU this process has used, every thread (user + system): the event loop, and PGlite's database when embedded. */
export function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * Milliseconds of CPU of one PostgreSQL cluster: its postmaster and every
 * process it started, found from one of its backends (`backendPid`, from
 * `select pg_backend_pid()`), never other clusters on the machine. Live
 * processes are read from /proc/<pid>/schedstat (nanoseconds); those already
 * gone (an autovacuum worker, a backend that closed) are counted in the
 * postmaster's cutime + cstime once it has reaped them, in ticks of 10 ms.
 */
export function clusterCpu(backendPid: number): () => number {
  const postmaster = Number(statFields(backendPid)[1]);
  return () => {
    const fields = statFields(postmaster);
    let ms = ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
    for (const pid of [postmaster, ...children(postmaster)]) ms += scheduledMs(pid);
    return ms;
  };
}

/** The fields of /proc/<pid>/stat after the command name (which may hold spaces): [0] is the state, [1] the parent. */
function statFields(pid: number): string[] {
  return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
}

function children(pid: number): number[] {
  return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
}

/** A process's time on a CPU; 0 if it ended since it was listed (its time is then the parent's cutime). */
function scheduledMs(pid: number): number {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return 0;
  }
}

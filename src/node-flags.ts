// The Node flags Parley's processes run with.
//
// --max-semi-space-size: V8's young generation, per semi-space, in MB (16 by
// default on a 64-bit machine). Under an API burst a scavenge copies what the
// old copies of the requests in flight at the scavenge before still point to,
// and the longer between two scavenges, the more that is; a call's signal
// that arrives during a scavenge waits for it. A smaller young generation
// gives shorter pauses, more of them, for the same share of the loop's time
// (bench/README.md, "a smaller young generation for the event loop"). V8
// sizes its heap as the process starts: this cannot be set from inside it.
//
// It is for the event loop that relays the calls' signals, and costs the
// API's reads (GET room at 10 connections: bench/README.md, "Issue 45: the
// read path and the young generation"). By default the calls have a process
// of their own (CALLS_PROCESS=separate), started with CALLS_NODE_FLAGS, and
// the main process, which serves the API, runs with V8's default: `npm start`
// gives no flag (package.json, where SERVER_NODE_FLAGS is written out again;
// a test keeps the two the same). With CALLS_PROCESS=inline the calls share
// the main process's loop, and it needs the calls' flags.
export const CALLS_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/** The flags of the main process as `npm start` starts it (the calls in a process of their own). */
export const SERVER_NODE_FLAGS: readonly string[] = [];

/** The flags the main process needs, by where the calls run. */
export function serverNodeFlags(callsProcess: 'separate' | 'inline'): readonly string[] {
  return callsProcess === 'inline' ? CALLS_NODE_FLAGS : SERVER_NODE_FLAGS;
}

/** Which of `wanted` this process was started without, on its command line or in NODE_OPTIONS. */
export function missingServerFlags(wanted: readonly string[], execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.split('=')[0]!.replaceAll('_', '-')));
  return wanted.filter((flag) => !given.has(flag.split('=')[0]!));
}

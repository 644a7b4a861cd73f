// The Node flags a server process runs with: `npm start` (package.json, where
// they are written out again; a test keeps the two the same), `parley start`,
// and the servers the tests and benchmarks start.
//
// --max-semi-space-size: V8's young generation, per semi-space, in MB (16 by
// default on a 64-bit machine). Under an API burst a scavenge copies what the
// old copies of the requests in flight at the scavenge before still point to,
// and the longer between two scavenges, the more that is; a call's signal
// that arrives during a scavenge waits for it. A smaller young generation
// gives shorter pauses, more of them, for the same share of the loop's time
// (bench/README.md, "a smaller young generation for the event loop"). V8
// sizes its heap as the process starts: this cannot be set from inside it.
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/** The server flags this process was started without, on its command line or in NODE_OPTIONS. */
export function missingServerFlags(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.split('=')[0]!.replaceAll('_', '-')));
  return SERVER_NODE_FLAGS.filter((flag) => !given.has(flag.split('=')[0]!));
}

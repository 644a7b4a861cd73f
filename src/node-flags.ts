// The Node flags a server process runs with: `npm start` (package.json, where
// they are written out again; a test keeps the two the same), `parley start`,
// and the servers the tests and benchmarks start.
//
// --max-semi-space-size: V8's young generation, per semi-space, in MB (16 by
// default on a 64-bit machine). Under an API burst every scavenge copies what
// the requests in flight hold, and the longer between scavenges, the more they
// have allocated since that only their own older objects keep alive: on the
// embedded database at 100 connections a scavenge paused the event loop for
// 5–6 ms, and a call's signal that arrived in one waited that long (most of
// the relay's p99 under the burst). With 8 MB the pauses are shorter, in
// exchange for more of them (bench/README.md, "the young generation"). V8
// sizes its heap when the process starts, so this cannot be set from inside.
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=8'];

/** The server flags this process was started without, on its command line or in NODE_OPTIONS. */
export function missingServerFlags(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): string[] {
  const given = new Set([...execArgv, ...nodeOptions.split(/\s+/)].map((flag) => flag.split('=')[0]!.replaceAll('_', '-')));
  return SERVER_NODE_FLAGS.filter((flag) => !given.has(flag.split('=')[0]!));
}

// The worker thread that owns the embedded database (started by
// pglite-thread.ts). PGlite is PostgreSQL compiled to WASM: every statement
// runs synchronously on the thread that holds it: on the main thread an API
// burst would stall HTTP and every call's signaling for as long as its
// statements run. Here it runs on a thread of its own.
//
// Requests run one at a time in arrival order, except that while a connection
// has a transaction open, requests from other connections wait until it ends:
// the exclusivity the in-process driver's queue gave, kept where the
// statements actually run, so that statements outside a transaction can be
// sent without waiting for the previous answer (no idle round trips).
import { readFile } from 'node:fs/promises';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { serializeError, type Reply, type Request, type WorkerData } from './pglite-thread.js';
import { createStatements } from './pglite-statements.js';
import { DATE, INT8, keepText, parseInt8 } from './type-parsers.js';

const port = parentPort!;

/**
 * This thread's nice value. Where it and the event loop share a core (a
 * small VM, a busy one), the scheduler then runs the event loop first when
 * both have work: a relayed offer or a `/healthz` does not wait for a slice
 * of database work. The database loses little: the event loop mostly waits
 * for it (bench/README.md, "the server on a core of its own").
 */
const DATABASE_THREAD_NICE = 10;
// Only on Linux, where a nice value is a thread's: elsewhere (macOS) it is the
// whole process's, and the event loop would be lowered with it.
if (process.platform === 'linux') {
  try {
    setPriority(0, DATABASE_THREAD_NICE);
  } catch {
    // Refused (lowering needs no privilege, so not expected): the thread keeps the process's.
  }
}
const { dataDir, loadDataDir, pgliteWasmModule, initdbWasmModule } = workerData as WorkerData;

let pglite: PGlite;
let statements: ReturnType<typeof createStatements>;

const pending: Request[] = [];
/** The connection whose transaction is open, if any. */
let owner: number | null = null;
let running = false;

async function run(request: Request): Promise<Reply> {
  switch (request.kind) {
    case 'query': {
      const result = await statements.query(request.sql, request.params);
      return { id: request.id, rows: result.rows, affectedRows: result.affectedRows ?? 0 };
    }
    case 'begin':
      await pglite.query('begin');
      owner = request.connection;
      return { id: request.id, rows: [], affectedRows: 0 };
    case 'commit':
    case 'rollback':
      // A failed commit ends the transaction too (PostgreSQL rolls it back).
      try {
        await pglite.query(request.kind);
      } finally {
        owner = null;
      }
      return { id: request.id, rows: [], affectedRows: 0 };
    case 'exec':
      await pglite.exec(request.sql);
      return { id: request.id, rows: [], affectedRows: 0 };
    case 'close':
      // Flushes the data directory; the main thread then ends this thread.
      await pglite.close();
      return { id: request.id, rows: [], affectedRows: 0 };
  }
}

/** The next request allowed to run: the transaction's own, or any (in order) when none is open; close goes in its turn regardless. */
function next(): Request | undefined {
  const index = owner === null ? 0 : pending.findIndex((r) => r.connection === owner || r.kind === 'close');
  return index < 0 ? undefined : pending.splice(index, 1)[0];
}

async function pump(): Promise<void> {
  if (running) return;
  running = true;
  for (let request = next(); request; request = next()) {
    let reply: Reply;
    try {
      reply = await run(request);
    } catch (error) {
      reply = { id: request.id, error: serializeError(error) };
    }
    port.postMessage(reply);
  }
  running = false;
}

// Reply 0 says whether the database opened; the main thread ends this thread if not.
try {
  pglite = await PGlite.create(dataDir === null ? 'memory://' : dataDir, {
    pgliteWasmModule,
    initdbWasmModule,
    ...(loadDataDir ? { loadDataDir: new Blob([await readFile(loadDataDir)]) } : {}),
    parsers: { [INT8]: parseInt8, [DATE]: keepText },
  });
  statements = createStatements(pglite);
  port.on('message', (requests: Request[]) => {
    pending.push(...requests);
    void pump();
  });
  port.postMessage({ id: 0, rows: [], affectedRows: 0 } satisfies Reply);
} catch (error) {
  port.postMessage({ id: 0, error: serializeError(error) } satisfies Reply);
}

// The embedded database from the calls process (realtime/calls-process/).
// PGlite allows one process per data directory, and its worker thread lives in
// the main process; the calls process sends its statements there over IPC, and
// the main process runs them on the worker as its own (PGliteThread.forward).
// Only the calls' own statements cross (a join, a leave, a network report),
// never a relayed message: the relay needs no database.
import { PGliteChannel, serializeError, type PGliteThread, type Reply, type Request } from './pglite-thread.js';

/** The calls process's side: a PGliteChannel whose far side is the main process. */
export class RemotePGlite extends PGliteChannel {
  constructor(private readonly sendRequests: (requests: Request[]) => void) {
    super();
  }

  /** A reply from the main process. */
  receive(reply: Reply): void {
    this.settle(reply);
  }

  /** The main process is gone: every statement waiting fails as on a lost connection (503). */
  lost(): void {
    this.fail(Object.assign(new Error('The main process, which holds the embedded database, is gone'), { code: '08006' }));
  }

  /** Stops sending; the database itself is the main process's to close. */
  close(): Promise<void> {
    this.closing ??= Promise.resolve();
    return this.closing;
  }

  protected post(requests: Request[]): void {
    this.sendRequests(requests);
  }
}

/**
 * The main process's side: runs the calls process's requests on the worker
 * and sends each reply back. `abandon` is for when that process ends: a
 * transaction it left open would hold the database for ever (the worker runs
 * nobody else's statements until it ends), so each is rolled back.
 */
export function serveRemoteStatements(thread: PGliteThread, sendReply: (reply: Reply) => void) {
  const openTransactions = new Set<number>();
  return {
    run(requests: Request[]): void {
      for (const request of requests) {
        if (request.kind === 'close') continue;
        if (request.kind === 'begin') openTransactions.add(request.connection);
        if (request.kind === 'commit' || request.kind === 'rollback') openTransactions.delete(request.connection);
        thread.forward(request).then(
          (result) => sendReply({ id: request.id, rows: result.rows, affectedRows: result.affectedRows }),
          (error: unknown) => sendReply({ id: request.id, error: serializeError(error) }),
        );
      }
    },
    abandon(): void {
      for (const connection of openTransactions) thread.forward({ id: 0, connection, kind: 'rollback' }).catch(() => {});
      openTransactions.clear();
    },
  };
}

// The main thread's side of the embedded database: PGlite runs in a worker
// thread (pglite-worker.ts, docs/design.md#the-embedded-database) and this
// proxy sends it statements and gets rows back. Errors come back as Errors
// with the database's fields (code, constraint, severity, ...), so the error
// mapping above (409, 503, the log filter) sees what it saw in process.
import fs from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { PGliteOptions } from '@electric-sql/pglite';

// The build's lib (ES2023, no DOM) does not declare WebAssembly; Node has it.
type WasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>;
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }).WebAssembly;

export interface WorkerData {
  /** PGlite's directory, or null for an in-memory database. */
  dataDir: string | null;
  /** A tarball of a data directory (PGlite's dumpDataDir) to start from instead of a new one: the tests' migrated database. */
  loadDataDir?: string;
  pgliteWasmModule: WasmModule;
  initdbWasmModule: WasmModule;
}

let compiled: Promise<Pick<WorkerData, 'pgliteWasmModule' | 'initdbWasmModule'>> | null = null;

/**
 * PGlite's WebAssembly, compiled once per process and shared with every
 * worker: PGlite caches the compiled module per thread, so each new worker
 * compiled its 9 MB again (open took 2x as long as in process; tests open many).
 */
function compiledWasm() {
  compiled ??= (async () => {
    const dist = path.dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite'));
    const compile = async (file: string) => wasm.compile(await fs.readFile(path.join(dist, file)));
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([compile('pglite.wasm'), compile('initdb.wasm')]);
    return { pgliteWasmModule, initdbWasmModule };
  })();
  return compiled;
}

/** One request; `connection` is the Kysely connection it comes from (a transaction holds the database for its own). */
export type Request =
  | { id: number; connection: number; kind: 'query'; sql: string; params: readonly unknown[] }
  | { id: number; connection: number; kind: 'begin' | 'commit' | 'rollback' | 'close' }
  | { id: number; connection: number; kind: 'exec'; sql: string };

export interface SerializedError {
  message: string;
  fields: Record<string, string | number | boolean>;
}

export type Reply = { id: number; rows: unknown[]; affectedRows: number } | { id: number; error: SerializedError };

export interface QueryResult {
  rows: unknown[];
  affectedRows: number;
}

/**
 * The compiled worker beside this file; run from source (tests, tsx scripts)
 * the worker is TypeScript too, and Node 20 does not apply `--import tsx` to a
 * worker's entry, so a two-line entry registers tsx's loader and imports it.
 */
function startWorker(workerData: WorkerData): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./pglite-worker.js', import.meta.url), { workerData });
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const entry = new URL('./pglite-worker.ts', import.meta.url).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`, { eval: true, workerData });
}

/** The fields of a PostgreSQL error that code above reads (code, constraint, severity, ...): its primitive own properties. */
export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { message: String(error), fields: {} };
  const fields: SerializedError['fields'] = {};
  for (const key of Object.keys(error)) {
    const value = (error as unknown as Record<string, unknown>)[key];
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') fields[key] = value;
  }
  return { message: error.message, fields };
}

export function toError(error: SerializedError): Error {
  return Object.assign(new Error(error.message), error.fields);
}

/** The worker stopped without being asked: connection_failure, which the HTTP layer answers with 503. */
function workerGone(reason: string): Error {
  return Object.assign(new Error(`The embedded database's thread stopped: ${reason}`), { code: '08006' });
}

/**
 * Statements to PGlite over messages: ids, one message per turn of the event
 * loop, replies settled by id. The worker thread is one channel
 * (PGliteThread); the calls process reaches the same worker through the main
 * process (remote-pglite.ts).
 */
export abstract class PGliteChannel {
  private readonly waiting = new Map<number, { resolve: (result: QueryResult) => void; reject: (error: Error) => void }>();
  private outbox: Request[] = [];
  private nextId = 1;
  private nextConnection = 1;
  private failure: Error | null = null;
  protected closing: Promise<void> | null = null;

  /** Sends the requests of one turn to the far side. */
  protected abstract post(requests: Request[]): void;
  /** Stops taking requests; the worker's owner also closes PGlite and ends the thread. */
  abstract close(): Promise<void>;

  /** A new connection id: what a transaction's statements carry so that no other connection's run among them. */
  connection(): number {
    return this.nextConnection++;
  }

  query(connection: number, sql: string, params: readonly unknown[]): Promise<QueryResult> {
    return this.send({ id: 0, connection, kind: 'query', sql, params });
  }

  control(connection: number, kind: 'begin' | 'commit' | 'rollback'): Promise<QueryResult> {
    return this.send({ id: 0, connection, kind });
  }

  /** A multi-statement script (the simple protocol): migrations. */
  async exec(sql: string): Promise<void> {
    await this.send({ id: 0, connection: this.connection(), kind: 'exec', sql });
  }

  protected get failed(): boolean {
    return this.failure !== null;
  }

  protected send(request: Request): Promise<QueryResult> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closing && request.kind !== 'close') return Promise.reject(new Error('PGlite is closed'));
    request.id = this.nextId++;
    // The requests of one turn of the event loop go in one message.
    if (this.outbox.push(request) === 1) queueMicrotask(() => this.flush());
    return new Promise((resolve, reject) => this.waiting.set(request.id, { resolve, reject }));
  }

  private flush(): void {
    const requests = this.outbox;
    this.outbox = [];
    this.post(requests);
  }

  protected settle(reply: Reply): void {
    const waiter = this.waiting.get(reply.id);
    if (!waiter) return;
    this.waiting.delete(reply.id);
    if ('error' in reply) waiter.reject(toError(reply.error));
    else waiter.resolve(reply);
  }

  protected fail(error: Error): void {
    this.failure ??= error;
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
  }

  /** Waits for reply 0, which says whether the far side is ready (or carries its error). */
  protected opened(): Promise<QueryResult> {
    return new Promise((resolve, reject) => this.waiting.set(0, { resolve, reject }));
  }
}

export class PGliteThread extends PGliteChannel {
  private constructor(private readonly worker: Worker) {
    super();
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (error) => this.fail(workerGone(error.message)));
    worker.on('exit', (code) => this.fail(this.closing ? new Error('PGlite is closed') : workerGone(`exit code ${code}`)));
  }

  /** Starts the worker and waits until its PGlite is open (or throws its error). */
  static async open(dataDir: string | null, options: { loadDataDir?: string } = {}): Promise<PGliteThread> {
    const worker = startWorker({ dataDir, ...options, ...(await compiledWasm()) });
    const thread = new PGliteThread(worker);
    try {
      await thread.opened();
    } catch (error) {
      await worker.terminate();
      throw error;
    }
    return thread;
  }

  /**
   * Runs a request of another process's (the calls process, remote-pglite.ts)
   * under a connection id of its own: that process numbers its connections
   * from 1 as this one does, so its ids are negated.
   */
  forward(request: Request): Promise<QueryResult> {
    return this.send({ ...request, connection: -request.connection });
  }

  /** Closes PGlite (after the requests sent before) and ends the thread. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      if (!this.failed) await this.send({ id: 0, connection: 0, kind: 'close' }).catch(() => {});
      await this.worker.terminate();
    })();
    return this.closing;
  }

  protected post(requests: Request[]): void {
    this.worker.postMessage(requests);
  }
}

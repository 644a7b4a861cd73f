// A Kysely dialect over PGlite in its worker thread (pglite-thread.ts). Each
// connection Kysely acquires is a new id, not a lock: statements outside a
// transaction go to the worker without waiting for one another, and the worker
// keeps a transaction exclusive (another connection's statements wait until it
// commits or rolls back), as the one in-process connection did.
import {
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
} from 'kysely';
import type { PGliteChannel } from './pglite-thread.js';

class PGliteConnection implements DatabaseConnection {
  constructor(
    private readonly thread: PGliteChannel,
    readonly id: number,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const result = await this.thread.query(this.id, query.sql, query.parameters);
    return { rows: result.rows as R[], numAffectedRows: BigInt(result.affectedRows) };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('PGlite does not support streaming queries');
  }
}

class PGliteDriver implements Driver {
  constructor(private readonly thread: PGliteChannel) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new PGliteConnection(this.thread, this.thread.connection());
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.thread.control((connection as PGliteConnection).id, 'begin');
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await this.thread.control((connection as PGliteConnection).id, 'commit');
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await this.thread.control((connection as PGliteConnection).id, 'rollback');
  }

  async releaseConnection(): Promise<void> {}

  /** The handle closes the thread (client.ts): scripts use it without Kysely. */
  async destroy(): Promise<void> {}
}

export class PGliteDialect implements Dialect {
  constructor(private readonly thread: PGliteChannel) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver() {
    return new PGliteDriver(this.thread);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
}

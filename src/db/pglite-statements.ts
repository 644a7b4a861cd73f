// Statements with parameters, run on PGlite as named prepared statements.
// PGlite's query() sends every statement unnamed (Parse, Describe, Bind,
// Describe, Execute, Sync: six calls into the WebAssembly PostgreSQL), so
// PostgreSQL parses and plans it again on every call. Here a statement is
// parsed once, under a name, and each call is one Bind-Execute-Sync, a
// fraction of the time (bench/README.md, "Optimizations"). The PostgreSQL pool
// gets the same for its hottest statements from db/prepared.ts; on PGlite
// every statement gains.
//
// The first execution also asks for the rows' description (Describe), which
// the later ones reuse: PostgreSQL refuses a named statement whose result
// columns changed since it was prepared, and such a statement is prepared
// and described again (`stale`), as db/shaped-query.ts does on PostgreSQL.
import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';

const serialize = protocol.serialize;
type BackendMessage = Parameters<typeof parse.parseResults>[0][number];

/** Statements kept at most; the least recently used is closed first. */
const KEPT = 500;

/** Whether the named statement is gone (deallocated) or a table it reads changed shape: it is parsed again, once. */
function stale(error: unknown): boolean {
  const { code, message } = error as { code?: string; message?: string };
  return code === '26000' || (code === '0A000' && /cached plan must not change result type/.test(message ?? ''));
}

interface Prepared {
  name: string;
  /** The parameters' type OIDs, which pick their serializers (PGlite's query() does the same). */
  parameterTypes: number[];
  /** Its rows' description from its first execution (null: it returns no rows); undefined until then. */
  rowDescription?: BackendMessage | null;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const message = new Uint8Array(parts.reduce((length, part) => length + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    message.set(part, offset);
    offset += part.length;
  }
  return message;
}

export function createStatements(pglite: PGlite) {
  /** By SQL text, least recently used first (a Map keeps insertion order). */
  const prepared = new Map<string, Prepared>();
  let nextName = 1;

  async function prepare(sql: string): Promise<Prepared> {
    const name = `parley_${nextName++}`;
    const { messages } = await pglite.execProtocol(
      concat([serialize.parse({ name, text: sql, types: [] }), serialize.describe({ type: 'S', name }), serialize.sync()]),
    );
    const description = messages.find((message) => message.name === 'parameterDescription') as { dataTypeIDs: number[] } | undefined;
    const statement = { name, parameterTypes: description?.dataTypeIDs ?? [] };
    prepared.set(sql, statement);
    if (prepared.size > KEPT) {
      const [oldestSql, oldest] = prepared.entries().next().value!;
      prepared.delete(oldestSql);
      await pglite.execProtocol(concat([serialize.close({ type: 'S', name: oldest.name }), serialize.sync()]));
    }
    return statement;
  }

  async function execute(statement: Prepared, params: readonly unknown[]): Promise<Results> {
    const values = params.map((value, index) => {
      if (value === null || value === undefined) return null;
      const serializer = pglite.serializers[statement.parameterTypes[index]!];
      return serializer ? serializer(value) : String(value);
    });
    const { rowDescription } = statement;
    const bind = serialize.bind({ statement: statement.name, values });
    if (rowDescription !== undefined) {
      const { messages } = await pglite.execProtocol(concat([bind, serialize.execute({}), serialize.sync()]));
      return parse.parseResults(rowDescription ? [rowDescription, ...messages] : messages, pglite.parsers)[0]!;
    }
    // execProtocol throws on an error: these messages are a successful execution's.
    const { messages } = await pglite.execProtocol(concat([bind, serialize.describe({ type: 'P' }), serialize.execute({}), serialize.sync()]));
    statement.rowDescription = messages.find((message) => message.name === 'rowDescription') ?? null;
    return parse.parseResults(messages, pglite.parsers)[0]!;
  }

  return {
    /** One statement with its parameters, as PGlite's query() runs it (the same serializers, parsers and errors). */
    async query(sql: string, params: readonly unknown[]): Promise<Results> {
      let statement = prepared.get(sql);
      if (!statement) return execute(await prepare(sql), params);
      prepared.delete(sql);
      prepared.set(sql, statement);
      try {
        return await execute(statement, params);
      } catch (error) {
        if (!stale(error)) throw error;
        prepared.delete(sql);
        statement = await prepare(sql);
        return execute(statement, params);
      }
    },
  };
}

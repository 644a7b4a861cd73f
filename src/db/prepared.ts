// Statements built and compiled once, for the hottest paths. Kysely builds an
// immutable operation tree and compiles it to SQL on every call; for the token
// lookup every API request makes and for a room create, that was the largest
// item of Parley's own in the request's profile (bench/README.md). Here the
// builder runs once with placeholders where the values go; each call only puts
// its values in their places. The statement stays typed and written with
// Kysely like every other.
//
// On PostgreSQL each of these is also a named (server-side prepared)
// statement (client.ts): a connection parses and plans it once, not on every
// call. For GET room that halved the CPU PostgreSQL spends per request
// (bench/README.md). Such a statement names its columns instead of `*`: a
// migration that adds a column must not change the rows of a statement another
// node has prepared (PostgreSQL refuses to run it then).
import type { Compilable, CompiledQuery, Kysely } from 'kysely';

/** The SQL texts compiled here, and the name each is prepared under on a connection. */
const statementNames = new Map<string, string>();

/** The name of a statement compiled by prepare(), for the PostgreSQL driver; undefined for any other SQL. */
export function preparedStatementName(sqlText: string): string | undefined {
  return statementNames.get(sqlText);
}

/** Stands for the argument of this name in the compiled statement's parameters. */
class Placeholder {
  constructor(readonly name: string) {}
}

/**
 * `build` receives stand-ins for the arguments and uses them as values
 * (comparisons, inserted values): never as identifiers, lists or SQL text, which
 * would be fixed at the first build. The statement's shape must not depend on
 * the arguments either: a query that varies with them needs one prepared
 * statement per shape.
 */
export function prepare<DB, Args extends object, Row>(db: Kysely<DB>, build: (args: Args) => Compilable<Row>): (args: Args) => Promise<Row[]> {
  const standIns = new Proxy({} as Args, { get: (_target, name) => new Placeholder(String(name)) });
  const template: CompiledQuery<Row> = build(standIns).compile();
  if (!statementNames.has(template.sql)) statementNames.set(template.sql, `parley_${statementNames.size + 1}`);
  const slots = template.parameters.map((value) => (value instanceof Placeholder ? value.name : null));
  return async (args) => {
    const values = args as Record<string, unknown>;
    const parameters = slots.map((name, i) => (name === null ? template.parameters[i] : values[name]));
    const result = await db.executeQuery<Row>({ ...template, parameters });
    return result.rows;
  };
}

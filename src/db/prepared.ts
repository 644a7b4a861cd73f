// Statements built and compiled once, for the hottest paths. Kysely builds an
// immutable operation tree and compiles it to SQL on every call; for the token
// lookup every API request makes and for a room create, that was the largest
// item of Parley's own in the request's profile (bench/README.md). Here the
// builder runs once with placeholders where the values go; each call only puts
// its values in their places. The statement stays typed and written with
// Kysely like every other.
import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from './client.js';

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
export function prepare<Args extends object, Row>(db: Db, build: (args: Args) => Compilable<Row>): (args: Args) => Promise<Row[]> {
  const standIns = new Proxy({} as Args, { get: (_target, name) => new Placeholder(String(name)) });
  const template: CompiledQuery<Row> = build(standIns).compile();
  const slots = template.parameters.map((value) => (value instanceof Placeholder ? value.name : null));
  return async (args) => {
    const values = args as Record<string, unknown>;
    const parameters = slots.map((name, i) => (name === null ? template.parameters[i] : values[name]));
    const result = await db.executeQuery<Row>({ ...template, parameters });
    return result.rows;
  };
}

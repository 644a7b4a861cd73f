// Statements built and compiled once, for the hottest paths. Kysely builds an
// immutable operation tree and compiles it to SQL on every call; for the token
// lookup every API request makes and for a room create, that was the largest
// item of Parley's own in the request's profile (bench/README.md). Here the
// builder runs once with placeholders where the values go; each call only puts
// its values in their places. The statement stays typed and written with
// Kysely like every other.
//
// On PostgreSQL they skip Kysely's executor (its connection provider and
// driver layers, some microseconds and promises per statement) and go to the
// pool directly, each as a named (server-side prepared) statement: a
// connection parses and plans it once, not on every call. For GET room that
// halved the CPU PostgreSQL spends per request (bench/README.md). Such a
// statement names its columns instead of `*`: a migration that adds a column
// must not change the rows of a statement another node has prepared
// (PostgreSQL refuses to run it then). On PGlite they go to its thread
// directly the same way, and its worker parses each text once. They never run
// inside a transaction.
import type { Compilable, CompiledQuery, Kysely } from 'kysely';

/** Runs a compiled statement under its name; returns its rows. */
export type StatementRunner = (name: string, sql: string, parameters: readonly unknown[]) => Promise<unknown[]>;

// By executor: `db.withTables()` and the like share it.
const runners = new WeakMap<object, StatementRunner>();

/** Statements prepare() compiles for `db` from now on run through `run` instead of Kysely's executor (client.ts). */
export function runStatementsWith<DB>(db: Kysely<DB>, run: StatementRunner): void {
  runners.set(db.getExecutor(), run);
}

/** Each SQL text compiled here has one name, whichever database it runs on. */
const statementNames = new Map<string, string>();

/** The SQL texts prepared for each database (its executor): another's, in the same process, are not its code's. */
const preparedFor = new WeakMap<object, Set<string>>();

/** Every statement compiled for `db` so far, with its name (test/api/named-statement-plans.test.ts explains each). */
export function compiledStatements<DB>(db: Kysely<DB>): { name: string; sql: string }[] {
  const texts = preparedFor.get(db.getExecutor()) ?? new Set<string>();
  return [...statementNames].filter(([sql]) => texts.has(sql)).map(([sql, name]) => ({ name, sql }));
}

/** Stands for the value `name` of the call's argument object number `from` in the compiled statement's parameters. */
class Placeholder {
  constructor(
    readonly from: number,
    readonly name: string,
  ) {}
}

/**
 * `build` receives stand-ins for the arguments and uses them as values
 * (comparisons, inserted values): never as identifiers, lists or SQL text, which
 * would be fixed at the first build. The statement's shape must not depend on
 * the arguments either: a query that varies with them needs one prepared
 * statement per shape.
 *
 * The arguments are one object or several (a room's settings beside the rest
 * of a write): each call passes them as they are, and the values go to the
 * statement without being copied into one object first.
 */
export function prepare<DB, Args extends object[], Row>(db: Kysely<DB>, build: (...args: Args) => Compilable<Row>): (...args: Args) => Promise<Row[]> {
  const standIns = Array.from({ length: build.length }, (_, from) => new Proxy({}, { get: (_target, name) => new Placeholder(from, String(name)) }));
  const template: CompiledQuery<Row> = build(...(standIns as Args)).compile();
  let name = statementNames.get(template.sql);
  if (name === undefined) statementNames.set(template.sql, (name = `parley_${statementNames.size + 1}`));
  const executor = db.getExecutor();
  if (!preparedFor.has(executor)) preparedFor.set(executor, new Set());
  preparedFor.get(executor)!.add(template.sql);
  const slots = template.parameters.map((value) => (value instanceof Placeholder ? value : null));
  const parametersOf = (args: Args) =>
    slots.map((slot, i) => (slot === null ? template.parameters[i] : (args[slot.from] as Record<string, unknown>)[slot.name]));
  const run = runners.get(db.getExecutor());
  if (run) return (...args) => run(name, template.sql, parametersOf(args)) as Promise<Row[]>;
  return async (...args) => (await db.executeQuery<Row>({ ...template, parameters: parametersOf(args) })).rows;
}

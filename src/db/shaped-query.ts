// pg's Query for the prepared statements of prepared.ts, with each statement's
// row shape kept instead of built again for every execution.
//
// For every result pg builds the row's parsers and an empty row from the
// row description (Result.addFields: one type-parser lookup per column, a
// dictionary-mode object), and copies the query's config with
// Object.defineProperties. For a room's 34 columns that took more of the
// event loop than Parley's own code on the path (bench/README.md,
// "Optimizations"). A named
// statement returns the same columns every time, so the shape is built once
// per statement and reused for as long as the row description matches it.
//
// Once a connection has seen a named statement's row description, it runs
// that statement without asking for it again (no Describe message): PostgreSQL
// then sends the rows alone. It refuses to run a named statement whose result
// columns changed since that connection prepared it ("cached plan must not
// change result type"), so the shape the connection saw stays its statement's.
// Not asking saves the description's bytes on the wire and the objects pg
// builds from them, on every request.
//
// This leans on three fields of pg's Result (`fields`, `_parsers`,
// `_prebuiltEmptyResultObject`) and on pg's Query.prepare and Connection
// (`bind`, `execute`, `sync`, `parsedStatements`): test/api/shaped-query.test.ts
// compares its rows with pg's own, types included, and the API tests on
// PostgreSQL read every prepared statement through it, so a pg upgrade that
// changes them fails there, not in production.
import pg from 'pg';
// @ts-expect-error pg's lib/utils has no type declarations
import pgUtils from 'pg/lib/utils.js';

interface RowShape {
  fields: pg.FieldDef[];
  parsers: unknown[];
  empty: unknown;
}

/** The part of pg's Result this class fills in (pg/lib/result.js). */
interface ResultInternals {
  fields: pg.FieldDef[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: unknown;
}

/** What pg's Query keeps that is not in its type declarations (pg/lib/query.js). */
interface QueryInternals {
  name?: string;
  text: string;
  values?: unknown[];
  callback?: (error: Error | null, result: pg.QueryResult) => void;
  _result: ResultInternals;
  _accumulateRows: boolean;
  handleRowDescription(message: { fields: pg.FieldDef[] }): void;
  prepare(connection: Connection): void;
  handleError(error: unknown, connection: Connection): void;
}

/** The part of pg's Connection (pg/lib/connection.js) a query without Describe uses. */
interface Connection {
  parsedStatements: Record<string, string>;
  bind(config: { statement?: string; values?: unknown[]; valueMapper: unknown }): void;
  execute(config: object): void;
  close(config: { type: 'S'; name?: string }): void;
  sync(): void;
}

const queryPrototype = pg.Query.prototype as unknown as QueryInternals;
// pg's own mapping of a value to the wire, as its Query.prepare passes it.
const { prepareValue } = pgUtils as { prepareValue: unknown };

/** By connection, the shape each of its named statements was described with. */
const describedOn = new WeakMap<Connection, Map<string, RowShape>>();

function sameColumns(a: pg.FieldDef[], b: pg.FieldDef[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i]!.name !== b[i]!.name || a[i]!.dataTypeID !== b[i]!.dataTypeID || a[i]!.format !== b[i]!.format) return false;
  }
  return true;
}

/** Row shapes by statement text, for one pool (its type parsers decide the shape's parsers). */
export type RowShapes = Map<string, RowShape>;

export class ShapedQuery extends pg.Query {
  private readonly shapes: RowShapes;
  /** The connection asked to describe this execution's rows, if it was. */
  private describing: Connection | undefined;

  constructor(statement: { name?: string; text: string; values: unknown[] }, shapes: RowShapes, callback: (error: Error | null, result: pg.QueryResult) => void) {
    // The text alone: pg copies a config object property by property, a string it does not.
    super(statement.text);
    const self = this as unknown as QueryInternals;
    self.name = statement.name;
    self.values = statement.values;
    self.callback = callback;
    this.shapes = shapes;
  }

  prepare(connection: Connection): void {
    const self = this as unknown as QueryInternals;
    const shape = self.name && connection.parsedStatements[self.name] === self.text ? describedOn.get(connection)?.get(self.name) : undefined;
    if (!shape) {
      this.describing = connection;
      queryPrototype.prepare.call(this, connection);
      return;
    }
    // pg's Query.prepare without its Describe.
    try {
      connection.bind({ statement: self.name, values: self.values, valueMapper: prepareValue });
    } catch (error) {
      connection.close({ type: 'S', name: self.name });
      connection.sync();
      self.handleError(error, connection);
      return;
    }
    this.useShape(shape, shape.fields);
    connection.execute({ portal: '', rows: undefined });
    connection.sync();
  }

  handleRowDescription(message: { fields: pg.FieldDef[] }): void {
    const self = this as unknown as QueryInternals;
    let shape = this.shapes.get(self.text);
    if (shape && sameColumns(shape.fields, message.fields)) {
      this.useShape(shape, message.fields);
    } else {
      queryPrototype.handleRowDescription.call(this, message);
      shape = { fields: message.fields, parsers: self._result._parsers ?? [], empty: self._result._prebuiltEmptyResultObject };
      this.shapes.set(self.text, shape);
    }
    if (this.describing && self.name) {
      let shapes = describedOn.get(this.describing);
      if (!shapes) describedOn.set(this.describing, (shapes = new Map()));
      shapes.set(self.name, shape);
    }
  }

  private useShape(shape: RowShape, fields: pg.FieldDef[]): void {
    const self = this as unknown as QueryInternals;
    self._result.fields = fields;
    self._result._parsers = shape.parsers;
    self._result._prebuiltEmptyResultObject = shape.empty;
    self._accumulateRows = true; // a callback is always set
  }
}

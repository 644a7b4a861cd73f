// pg's Query for the prepared statements of prepared.ts, with each statement's
// row shape kept instead of built again for every execution.
//
// For every result pg builds the row's parsers and an empty row from the
// row description (Result.addFields: one type-parser lookup per column, a
// dictionary-mode object), and copies the query's config with
// Object.defineProperties. For GET and PUT room (34 columns) that was about 5 %
// of the event loop's time in the profile, more than Parley's own code on the
// path (bench/README.md, "Issue 15: the driver's per-query work"). A named
// statement returns the same columns every time, so the shape is built once
// per statement and reused for as long as the row description matches it.
//
// This leans on three fields of pg's Result (`fields`, `_parsers`,
// `_prebuiltEmptyResultObject`): test/api/shaped-query.test.ts compares its rows
// with pg's own, types included, and the API tests on PostgreSQL read every
// prepared statement through it, so a pg upgrade that changes them fails
// there, not in production.
import pg from 'pg';

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
  values?: unknown[];
  callback?: (error: Error | null, result: pg.QueryResult) => void;
  _result: ResultInternals;
  _accumulateRows: boolean;
  handleRowDescription(message: { fields: pg.FieldDef[] }): void;
}

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

  constructor(statement: { name?: string; text: string; values: unknown[] }, shapes: RowShapes, callback: (error: Error | null, result: pg.QueryResult) => void) {
    // The text alone: pg copies a config object property by property, a string it does not.
    super(statement.text);
    const self = this as unknown as QueryInternals;
    self.name = statement.name;
    self.values = statement.values;
    self.callback = callback;
    this.shapes = shapes;
  }

  handleRowDescription(message: { fields: pg.FieldDef[] }): void {
    const self = this as unknown as QueryInternals & { text: string };
    const shape = this.shapes.get(self.text);
    if (shape && sameColumns(shape.fields, message.fields)) {
      self._result.fields = message.fields;
      self._result._parsers = shape.parsers;
      self._result._prebuiltEmptyResultObject = shape.empty;
      self._accumulateRows = true; // a callback is always set
      return;
    }
    (pg.Query.prototype as unknown as QueryInternals).handleRowDescription.call(this, message);
    this.shapes.set(self.text, { fields: message.fields, parsers: self._result._parsers ?? [], empty: self._result._prebuiltEmptyResultObject });
  }
}

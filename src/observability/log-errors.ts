// How an error appears in a log line. PostgreSQL (and PGlite) quote the values
// of a statement's parameters in their errors: "invalid input syntax for type
// …: "<value>"" in the message and stack, "Key (token)=(<value>) …" in the
// detail, the parameter itself in `where`. Those values are join, participant
// and API-token hashes and names: a database error is logged by what names
// it (SQLSTATE, routine, schema object, code location), never by its text.
import pino from 'pino';
import { isDatabaseError } from '../db/database-error.js';

const KEPT = ['code', 'severity', 'routine', 'schema', 'table', 'column', 'constraint', 'dataType', 'file', 'line'] as const;

type SerializedError = { type: string; message: string; stack: string; [key: string]: unknown };

export function errorForLog(error: Error): SerializedError {
  const fields = error as Error & Record<string, unknown>;
  if (!isDatabaseError(error)) return pino.stdSerializers.err(error) as SerializedError;
  const kept: SerializedError = { type: 'DatabaseError', message: `database error ${String(fields.code)}`, stack: '' };
  for (const key of KEPT) if (fields[key] !== undefined) kept[key] = fields[key];
  // The frames say where it failed; the first line of the stack repeats the message.
  kept.stack = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line)).join('\n');
  return kept;
}

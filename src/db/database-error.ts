// Telling the database's own error reports from everything else.

interface DatabaseErrorFields {
  severity?: unknown;
  code?: unknown;
}

/**
 * A server's error report (pg's DatabaseError, PGlite's): it has a severity and
 * a five-character SQLSTATE, which a lost connection or a driver's own failure
 * has not.
 */
export function isDatabaseError(error: unknown): error is Error & DatabaseErrorFields {
  const fields = error as DatabaseErrorFields | null;
  return typeof fields?.severity === 'string' && typeof fields.code === 'string' && /^[0-9A-Z]{5}$/.test(fields.code);
}

/**
 * The database refused the statement and rolled it back: an ERROR, which
 * aborts its transaction, so nothing of it was written. A FATAL one ends the
 * connection and may come after a commit (the server stopping): whether the
 * statement's writes stayed is not known then.
 */
export function statementRolledBack(error: unknown): boolean {
  return isDatabaseError(error) && error.severity === 'ERROR';
}

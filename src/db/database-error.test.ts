// db/database-error.ts: which failures say that nothing of a statement was written.
import { describe, expect, it } from 'vitest';
import { isDatabaseError, statementRolledBack } from './database-error.js';

const report = (severity: string, code: string) => Object.assign(new Error('database said no'), { severity, code });

describe('statementRolledBack', () => {
  it('is true for an ERROR the server reported (a foreign key, a deadlock, a cancel)', () => {
    for (const code of ['23503', '40P01', '57014']) expect(statementRolledBack(report('ERROR', code))).toBe(true);
  });

  it('is false for a FATAL report, which may follow a commit (the server stopping)', () => {
    expect(isDatabaseError(report('FATAL', '57P01'))).toBe(true);
    expect(statementRolledBack(report('FATAL', '57P01'))).toBe(false);
  });

  it('is false for what the server never reported: a lost connection, a driver error, no error at all', () => {
    expect(statementRolledBack(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(statementRolledBack(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
    expect(statementRolledBack(undefined)).toBe(false);
  });
});

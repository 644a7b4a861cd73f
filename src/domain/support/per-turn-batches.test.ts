// domain/support/per-turn-batches.ts: lookups asked in one turn of the event
// loop share one load, sent after that turn; later ones wait for the next.
// Writes of one turn share one statement, and each still gets its own outcome.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { perTurnBatches, perTurnWrites } from './per-turn-batches.js';

interface Row {
  key: Buffer;
  value: string;
}
const key = (n: number) => Buffer.from([n]);

function fakeTable(rows: Row[]) {
  const loads: number[][] = [];
  const load = async (keys: Buffer[]) => {
    loads.push(keys.map((k) => k[0]!));
    return rows.filter((row) => keys.some((k) => k.equals(row.key)));
  };
  return { loads, find: perTurnBatches(load, (row) => row.key) };
}

describe('perTurnBatches', () => {
  it('answers every lookup of a turn from one load of the distinct keys', async () => {
    const { loads, find } = fakeTable([
      { key: key(1), value: 'one' },
      { key: key(2), value: 'two' },
    ]);
    const answers = await Promise.all([find(key(1)), find(key(2)), find(key(1)), find(key(9))]);
    expect(answers.map((row) => row?.value)).toEqual(['one', 'two', 'one', undefined]);
    expect(loads).toEqual([[1, 2, 9]]);
  });

  it('sends a lookup asked after the load started with the next turn’s load', async () => {
    const { loads, find } = fakeTable([{ key: key(1), value: 'one' }]);
    const first = find(key(1));
    await nextTurn();
    // The first load is on its way: this one is not part of it.
    const second = find(key(1));
    expect((await first)?.value).toBe('one');
    expect((await second)?.value).toBe('one');
    expect(loads).toEqual([[1], [1]]);
  });

  it('rejects every lookup of a batch whose load fails, and the next batch still works', async () => {
    let fail = true;
    const find = perTurnBatches(
      async (keys: Buffer[]) => {
        if (fail) throw new Error('database unavailable');
        return keys.map((k) => ({ key: k }));
      },
      (row) => row.key,
    );
    const results = await Promise.allSettled([find(key(1)), find(key(2))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await find(key(3))).toEqual({ key: key(3) });
  });
});

/** A store that writes numbers; `refuse` makes it refuse a statement holding that number. */
function fakeStore(refuse?: number, failure: 'refused' | 'lost' = 'refused') {
  const statements: number[][] = [];
  const stored: number[] = [];
  const fail = () => Object.assign(new Error(failure), { refused: failure === 'refused' });
  const one = async (n: number) => {
    statements.push([n]);
    if (n === refuse) throw fail();
    stored.push(n);
    return n * 10;
  };
  const many = async (ns: number[]) => {
    statements.push(ns);
    if (refuse !== undefined && ns.includes(refuse)) throw fail();
    stored.push(...ns);
    return ns.map((n) => n * 10);
  };
  const write = perTurnWrites(one, many, (error) => (error as { refused?: boolean }).refused === true, (n) => String(n));
  return { statements, stored, write };
}

describe('perTurnWrites', () => {
  it('writes every item of a turn in one statement, each caller getting its own result', async () => {
    const { statements, stored, write } = fakeStore();
    expect(await Promise.all([write(1), write(2), write(3)])).toEqual([10, 20, 30]);
    expect(statements).toEqual([[1, 2, 3]]);
    expect(stored).toEqual([1, 2, 3]);
  });

  it('writes a lone item by itself, and an item asked after the statement left with the next turn', async () => {
    const { statements, write } = fakeStore();
    const first = write(1);
    await nextTurn();
    const second = write(2);
    expect([await first, await second]).toEqual([10, 20]);
    expect(statements).toEqual([[1], [2]]);
  });

  it('writes a refused batch again item by item: only the refused item fails', async () => {
    const { statements, stored, write } = fakeStore(2);
    const outcomes = await Promise.allSettled([write(1), write(2), write(3)]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'failed'))).toEqual([10, 'failed', 30]);
    expect(statements).toEqual([[1, 2, 3], [1], [2], [3]]);
    expect(stored).toEqual([1, 3]);
  });

  it('fails the whole batch, writing nothing again, when the outcome is unknown (the connection lost)', async () => {
    const { statements, write } = fakeStore(2, 'lost');
    const outcomes = await Promise.allSettled([write(1), write(2), write(3)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(statements).toEqual([[1, 2, 3]]);
  });

  it('writes an item whose key is already in the statement alone, beside it', async () => {
    const { statements, write } = fakeStore();
    expect(await Promise.all([write(1), write(2), write(1), write(3)])).toEqual([10, 20, 10, 30]);
    expect(statements).toEqual([[1], [1, 2, 3]]);
  });
});

// domain/support/per-turn-batches.ts: lookups asked in one turn of the event
// loop share one load, sent after that turn; later ones wait for the next.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { perTurnBatches } from './per-turn-batches.js';

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

// Lookups that arrive in one turn of the event loop go to the database
// together, as one statement sent after that turn's I/O callbacks. Many
// connections of one integrator (the same API token) then share one round trip
// where each would have made its own. The statement starts after every lookup
// in it was asked for, so no caller gets an answer from a state older than its
// own request: batching changes the number of statements, never what they see.

interface Waiter<Row> {
  resolve(row: Row): void;
  reject(error: unknown): void;
}

/** A key's text, for comparing keys. */
const idOf = (key: Uint8Array) => Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('base64');

/**
 * `load` fetches the rows of several keys in one statement; `keyOfRow` tells
 * which key a row answers.
 */
export function perTurnBatches<Key extends Uint8Array, Row>(
  load: (keys: Key[]) => Promise<Row[]>,
  keyOfRow: (row: Row) => Uint8Array,
): (key: Key) => Promise<Row | undefined> {
  let batch: Map<string, { key: Key; waiters: Waiter<Row | undefined>[] }> | undefined;

  const flush = () => {
    const current = batch!;
    batch = undefined;
    load([...current.values()].map((entry) => entry.key)).then(
      (rows) => {
        const found = new Map(rows.map((row) => [idOf(keyOfRow(row)), row]));
        for (const [id, entry] of current) for (const waiter of entry.waiters) waiter.resolve(found.get(id));
      },
      (error: unknown) => {
        for (const entry of current.values()) for (const waiter of entry.waiters) waiter.reject(error);
      },
    );
  };

  return (key) =>
    new Promise((resolve, reject) => {
      if (!batch) {
        batch = new Map();
        setImmediate(flush);
      }
      const id = idOf(key);
      const entry = batch.get(id) ?? { key, waiters: [] };
      entry.waiters.push({ resolve, reject });
      batch.set(id, entry);
    });
}

/**
 * Writes asked in one turn of the event loop go to the database together, as
 * one statement sent after that turn's I/O callbacks: one round trip, one
 * statement's start and one commit (one flush of the write-ahead log, with
 * durable commits) for all of them. `one` writes a lone item; `many` writes
 * several in one statement, all or nothing, and gives each item's result in
 * the items' order.
 *
 * A batch whose statement was rolled back (`rolledBack`: the database refused
 * it, so nothing of it was written) is written again item by item, so that
 * each caller gets its own outcome: one write's failed check never fails the
 * others of its turn. Any other failure (the connection lost while the
 * statement ran) fails the whole batch: whether it committed is not known,
 * and writing again could write twice.
 *
 * `keyOf` names what an item writes (a room's token): an item whose key is
 * already in its turn's statement is written alone beside it, since one
 * statement cannot write one row twice in a known order.
 */
export function perTurnWrites<Item, Result>(
  one: (item: Item) => Promise<Result>,
  many: (items: Item[]) => Promise<Result[]>,
  rolledBack: (error: unknown) => boolean,
  keyOf?: (item: Item) => string,
): (item: Item) => Promise<Result> {
  let batch: { item: Item; waiter: Waiter<Result> }[] | undefined;

  const writeAlone = ({ item, waiter }: { item: Item; waiter: Waiter<Result> }) => one(item).then(waiter.resolve, waiter.reject);

  const flush = () => {
    let current = batch!;
    batch = undefined;
    if (keyOf && current.length > 1) {
      const keys = new Set<string>();
      current = current.filter((entry) => {
        const key = keyOf(entry.item);
        if (keys.has(key)) {
          void writeAlone(entry);
          return false;
        }
        keys.add(key);
        return true;
      });
    }
    if (current.length === 1) return void writeAlone(current[0]!);
    many(current.map((entry) => entry.item)).then(
      (results) => current.forEach((entry, i) => entry.waiter.resolve(results[i]!)),
      (error: unknown) => {
        if (rolledBack(error)) for (const entry of current) void writeAlone(entry);
        else for (const entry of current) entry.waiter.reject(error);
      },
    );
  };

  return (item) =>
    new Promise((resolve, reject) => {
      if (!batch) {
        batch = [];
        setImmediate(flush);
      }
      batch.push({ item, waiter: { resolve, reject } });
    });
}

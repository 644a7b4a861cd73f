// Lookups that arrive in one turn of the event loop go to the database
// together, as one statement sent after that turn's I/O callbacks. Many
// connections of one integrator (the same API token) then share one round trip
// where each would have made its own. The statement starts after every lookup
// in it was asked for, so no caller gets an answer from a state older than its
// own request: batching changes the number of statements, never what they see.

interface Waiter<Row> {
  resolve(row: Row | undefined): void;
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
  let batch: Map<string, { key: Key; waiters: Waiter<Row>[] }> | undefined;

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

// Work the hub started (database calls, room event handling) that a graceful
// stop must wait for before the database closes.
export function createInFlight() {
  const pending = new Set<Promise<unknown>>();
  return {
    /** Returns the same promise, remembered until it settles. */
    track<T>(promise: Promise<T>): Promise<T> {
      pending.add(promise);
      void promise.finally(() => pending.delete(promise)).catch(() => {});
      return promise;
    },
    /** Settles when everything tracked so far has settled, failed or not. */
    settled(): Promise<unknown> {
      return Promise.allSettled([...pending]);
    },
  };
}

export type InFlight = ReturnType<typeof createInFlight>;

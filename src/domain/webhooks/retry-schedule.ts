// When a failed delivery is tried again: growing delays, the first within
// about 10 s, the last more than a day after the event (docs/design.md, "Webhooks"). The same
// schedule as Svix's, which many receivers already expect.

/** Delay before attempt n+1 after attempt n failed (index n-1); 8 attempts in all, the last ~27.6 h after the first. */
export const RETRY_DELAYS_SECONDS = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600] as const;

/** When to try again after `attempts` attempts failed, or null when that was the last one. */
export function nextAttemptAt(attempts: number, failedAt: Date): Date | null {
  const delay = RETRY_DELAYS_SECONDS[attempts - 1];
  return delay === undefined ? null : new Date(failedAt.getTime() + delay * 1000);
}

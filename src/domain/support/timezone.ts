// Calendar days in a tenant's timezone: feedback from/to filters are dates there.

/** The IANA name as Intl spells it ('america/new_york' -> 'America/New_York'), or null if unknown. */
export function canonicalTimezone(timezone: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The 'YYYY-MM-DD' date of `instant` in `timezone`. */
export function localDay(instant: Date, timezone: string): string {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    // en-CA formats dates as YYYY-MM-DD.
    formatter = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' });
    formatters.set(timezone, formatter);
  }
  return formatter.format(instant);
}

/** True for a real calendar date written YYYY-MM-DD (rejects 2025-02-30). */
export function isCalendarDate(text: string): boolean {
  // Year 0000 exists for JavaScript (1 BC) but not for PostgreSQL's date type.
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text) || text.startsWith('0000')) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

// How both databases hand values to Parley (client.ts for PostgreSQL, the
// PGlite worker for the embedded one), by type OID:
// int8 (counts, ids) as numbers: every value Parley stores fits in 2^53.
// date as the 'YYYY-MM-DD' text: a calendar day, not an instant.
export const INT8 = 20;
export const DATE = 1082;
export const parseInt8 = (value: string) => Number(value);
export const keepText = (value: string) => value;

// `parley migrate` and `parley cleanup`: commands that open the database
// directly. On PGlite only one process may hold the data directory, so while a
// server runs they stop with DatabaseLockedError's message.
import type { Config } from '../config.js';
import { openDatabase, type DatabaseHandle } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import { createServices } from '../services.js';

async function withDatabase<T>(config: Readonly<Config>, fn: (database: DatabaseHandle) => Promise<T>): Promise<T> {
  const database = await openDatabase(config);
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}

export function migrateCommand(config: Readonly<Config>) {
  return withDatabase(config, async (database) => ({ database: database.description, applied: await migrate(database) }));
}

/** Runs the automatic cleanup once (with the files of the recordings of the rooms it deletes). Pending migrations are applied first, as the server does at start. */
export function cleanupCommand(config: Readonly<Config>) {
  return withDatabase(config, async (database) => {
    await migrate(database);
    const services = createServices({ database, config });
    const deleted = await services.cleanup.run();
    // The deleted rooms' recordings: their files too (docs/design.md, "Recording with consent").
    await services.recordings.sweepDeleted();
    return { deleted: deleted.length };
  });
}

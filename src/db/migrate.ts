// Forward-only migrations: plain SQL files applied in name order, each once,
// as one script together with its schema_migrations row (so a failed file
// leaves nothing behind). The handle serializes migrators across processes.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DatabaseHandle } from './client.js';

function migrationsDir(): string {
  // src/db/migrations in the source tree; compiled code in dist/src/db looks there too.
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, 'migrations'), path.resolve(here, '../../../src/db/migrations')];
  const found = candidates.find((dir) => fs.existsSync(dir));
  if (!found) throw new Error(`Migrations folder not found (looked in ${candidates.join(', ')})`);
  return found;
}

/** Applies the pending migrations and returns their file names. */
export async function migrate(handle: DatabaseHandle): Promise<string[]> {
  const dir = migrationsDir();
  const files = fs.readdirSync(dir).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  return handle.withScriptRunner(async (runner) => {
    await runner.exec('create table if not exists schema_migrations (name text primary key, applied_at timestamptz not null default now())');
    const done = new Set(await runner.names('select name from schema_migrations'));
    const applied: string[] = [];
    for (const file of files.filter((f) => !done.has(f))) {
      const script = fs.readFileSync(path.join(dir, file), 'utf8');
      // File names are checked by the pattern above, so quoting them here is safe.
      await runner.exec(`begin;\n${script}\n;insert into schema_migrations (name) values ('${file}');\ncommit;`);
      applied.push(file);
    }
    return applied;
  });
}

// A throwaway PostgreSQL cluster for a benchmark run (scripts/postgres.mjs),
// optionally made durable: that script turns fsync and synchronous_commit off
// for speed, which flatters every write. `durable: true` turns both back on
// (ALTER SYSTEM + reload: both settings take effect without a restart).
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pg from 'pg';

export interface BenchPostgres {
  url: string;
  stop(): Promise<void>;
}

interface PostgresScript {
  startPostgres(options: { log?: (line: string) => void }): Promise<{ url: string; stop(): Promise<void> }>;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export async function startBenchPostgres({ durable, log }: { durable: boolean; log: (line: string) => void }): Promise<BenchPostgres> {
  // A computed specifier: the script is plain JavaScript without type declarations.
  const script = (await import(pathToFileURL(path.join(root, 'scripts/postgres.mjs')).href)) as PostgresScript;
  const server = await script.startPostgres({ log });
  if (durable) {
    await withClient(server.url, async (client) => {
      await client.query('alter system set fsync = on');
      await client.query('alter system set synchronous_commit = on');
      await client.query('alter system set full_page_writes = on');
      await client.query('select pg_reload_conf()');
    });
  }
  return { url: server.url, stop: () => server.stop() };
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

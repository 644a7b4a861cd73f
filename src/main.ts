// The server process: configuration, start, graceful stop on SIGTERM/SIGINT.
import { ConfigError, loadConfig } from './config.js';
import { DatabaseLockedError } from './db/client.js';
import { startServer } from './server.js';

async function main(): Promise<void> {
  const server = await startServer(loadConfig());
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, 'stopping: draining connections');
    // A hard limit, so that a stuck connection cannot keep the process alive forever.
    setTimeout(() => process.exit(1), 15_000).unref();
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        server.app.log.error({ err: error }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof DatabaseLockedError) {
    process.stderr.write(`parley: ${error.message}\n`);
  } else {
    process.stderr.write(`parley: failed to start: ${error instanceof Error ? error.stack : String(error)}\n`);
  }
  process.exit(1);
});

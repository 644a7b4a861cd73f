// The server process: configuration, start, graceful stop on SIGTERM/SIGINT.
import v8 from 'node:v8';
import { ConfigError, loadConfig } from './config.js';
import { DatabaseLockedError } from './db/client.js';
import { missingServerFlags, serverNodeFlags } from './node-flags.js';
import { startServer } from './server.js';

// V8 moves an allocation site's objects straight to the old space once it has
// seen many of them survive a scavenge. Under load a request's objects are
// often still in flight at a scavenge, so V8 pretenured sites whose objects
// live a few milliseconds (pg's rows among them): they became old-space
// garbage, kept the young objects they point to alive, and every scavenge
// promoted more and paused the event loop longer (bench/README.md,
// "Optimizations"). The flag steers decisions V8 takes at each collection, so
// setting it as the process starts is enough.
v8.setFlagsFromString('--no-allocation-site-pretenuring');

async function main(): Promise<void> {
  const config = loadConfig();
  const server = await startServer(config);
  const missing = missingServerFlags(serverNodeFlags(config.callsProcess));
  // The calls share this process's event loop (CALLS_PROCESS=inline) and it was started without their flags: it works, but calls stall longer under API bursts.
  if (missing.length) server.app.log.warn({ missing }, `started without ${missing.join(' ')}: with CALLS_PROCESS=inline run \`node ${missing.join(' ')} dist/src/main.js\` (what \`parley start\` does; docs/deploy.md)`);
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

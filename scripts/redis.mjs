// Throwaway Redis server for tests and benchmarks (Debian's redis-server):
// loopback only, a free port, no persistence, stopped when the process exits.
//
//   import { startRedis } from './redis.mjs';
//   const redis = await startRedis();
//   ... redis.url ...
//   await redis.stop();
//
// CLI: `node scripts/redis.mjs` prints the URL and stops on SIGINT/SIGTERM.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { freePort } from './postgres.mjs';

export function findRedisServer() {
  for (const candidate of ['/usr/bin/redis-server', '/usr/local/bin/redis-server']) {
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

function ping(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => {
      socket.destroy();
      // With --requirepass the answer is -NOAUTH: Redis is up all the same.
      resolve(/^(\+PONG|-NOAUTH)/.test(String(data)));
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export async function startRedis({ log = () => {}, port: wantedPort, password } = {}) {
  const binary = findRedisServer();
  if (!binary) throw new Error('No redis-server found: install it with `apt-get install redis-server` (.ci/run does).');
  // A given port lets a test restart Redis where its clients reconnect.
  const port = wantedPort ?? (await freePort());
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes', '--daemonize', 'no', '--loglevel', 'warning', ...(password ? ['--requirepass', password] : [])],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const killNow = () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.on('exit', killNow);
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}`);
    if (await ping(port)) break;
    await new Promise((r) => setTimeout(r, 50));
    if (i === 99) {
      killNow();
      throw new Error('redis-server did not answer within 5 s');
    }
  }
  log(`redis-server on 127.0.0.1:${port}`);
  return {
    url: `redis://${password ? `:${encodeURIComponent(password)}@` : ''}127.0.0.1:${port}`,
    port,
    /** The process, for a test that freezes it (SIGSTOP, SIGCONT). */
    pid: child.pid,
    /** SIGTERM (a clean shutdown) by default; `stop('SIGKILL')` is Redis dying. */
    async stop(signal = 'SIGTERM') {
      process.off('exit', killNow);
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
      killNow();
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const redis = await startRedis({ log: (line) => process.stderr.write(line + '\n') });
  process.stdout.write(redis.url + '\n');
  const stop = () => redis.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

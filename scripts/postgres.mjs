// Throwaway PostgreSQL cluster for tests and benchmarks.
//
//   import { startPostgres } from './postgres.mjs';
//   const pg = await startPostgres({ log: console.error });
//   ... pg.url ...
//   await pg.stop();
//
// CLI: `node scripts/postgres.mjs` starts a cluster, prints its URL on stdout and
// stops it (removing its data) on SIGINT/SIGTERM/SIGHUP.
//
// The server is also stopped (synchronously, `pg_ctl -m immediate`) when the
// process exits for any other reason, and on SIGINT/SIGTERM/SIGHUP unless the
// caller passes `handleSignals: false` and handles them itself.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, renameSync, rmSync, chmodSync, chownSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/** Directory holding initdb/pg_ctl/postgres, or null if none is installed. */
export function findPostgresBinDir() {
  const candidates = [];
  if (process.env.PG_BINDIR) candidates.push(process.env.PG_BINDIR);
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    if (dir) candidates.push(dir);
  } catch {
    // no pg_config on PATH
  }
  const base = '/usr/lib/postgresql';
  if (existsSync(base)) {
    const versions = readdirSync(base)
      .filter((v) => /^\d+(\.\d+)?$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(path.join(base, v, 'bin'));
  }
  for (const dir of candidates) {
    if (['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(path.join(dir, b)))) return dir;
  }
  return null;
}

/** Ask the OS for a free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

function postgresUser() {
  // initdb/postgres refuse to run as root: use the `postgres` system user then.
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const r = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) {
    throw new Error(
      'Running as root, but there is no `postgres` system user to run PostgreSQL as ' +
        '(initdb refuses to run as root). Install PostgreSQL with `apt-get install postgresql`, or run as a normal user.',
    );
  }
  return { name: 'postgres', uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

/** Run a command (as the postgres user when we are root). */
async function run(user, cmd, args, opts = {}) {
  const [file, argv] = user ? ['runuser', ['-u', user.name, '--', cmd, ...args]] : [cmd, args];
  try {
    return await execFileP(file, argv, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, ...opts });
  } catch (err) {
    const out = [err.stdout, err.stderr].filter(Boolean).join('\n').trim();
    throw new Error(`${path.basename(cmd)} failed: ${err.message.split('\n')[0]}${out ? `\n${out}` : ''}`);
  }
}

/** initdb into dataDir (as `user`). */
async function initdb(user, binDir, dataDir) {
  const initdbBin = path.join(binDir, 'initdb');
  const base = ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync'];
  await run(user, initdbBin, [...base, '--locale=C.UTF-8']).catch(async (err) => {
    // Older servers or a missing C.UTF-8 locale: fall back to plain C.
    if (!/locale/i.test(err.message)) throw err;
    rmSync(dataDir, { recursive: true, force: true });
    return run(user, initdbBin, [...base, '--locale=C']);
  });
}

/**
 * A new cluster's data directory: a copy of one initdb made once per machine
 * (per PostgreSQL build and user) in the temporary directory, because initdb
 * is most of a cluster's start (9 s against 1 s for the copy on a loaded
 * 2-core machine) and a test run starts a dozen (the test sets', the
 * benchmarks' and the outage tests' own). The template is made in a directory
 * of its own and renamed into place, so a copy never sees half of one; two
 * runs making it at once keep the first. PARLEY_PG_TEMPLATE=0: initdb every time.
 */
async function initCluster(user, binDir, dataDir, say) {
  if (process.env.PARLEY_PG_TEMPLATE === '0') return initdb(user, binDir, dataDir);
  const initdbBin = path.join(binDir, 'initdb');
  const key = createHash('sha256').update(`${initdbBin} ${statSync(initdbBin).mtimeMs} ${user?.uid ?? process.getuid?.()}`).digest('hex').slice(0, 16);
  const template = path.join(os.tmpdir(), `parley-pg-template-${key}`);
  if (!existsSync(path.join(template, 'data', 'PG_VERSION'))) {
    const staging = mkdtempSync(path.join(os.tmpdir(), 'parley-pg-template-new-'));
    if (user) chownSync(staging, user.uid, user.gid);
    chmodSync(staging, 0o700);
    try {
      await initdb(user, binDir, path.join(staging, 'data'));
    } catch (err) {
      rmSync(staging, { recursive: true, force: true });
      throw err;
    }
    try {
      renameSync(staging, template);
      say(`postgres: initdb template made in ${template}`);
    } catch {
      // Another run renamed its template into place first: that one is used. Anything else: this one's initdb.
      if (!existsSync(path.join(template, 'data', 'PG_VERSION'))) {
        renameSync(path.join(staging, 'data'), dataDir);
        rmSync(staging, { recursive: true, force: true });
        return;
      }
      rmSync(staging, { recursive: true, force: true });
    }
  }
  try {
    await run(user, 'cp', ['-a', path.join(template, 'data'), dataDir]);
  } catch (err) {
    say(`postgres: copying the initdb template failed, running initdb (${err.message.split('\n')[0]})`);
    rmSync(dataDir, { recursive: true, force: true });
    await initdb(user, binDir, dataDir);
  }
}

function runSync(user, cmd, args) {
  const [file, argv] = user ? ['runuser', ['-u', user.name, '--', cmd, ...args]] : [cmd, args];
  return spawnSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
}

/**
 * Start a throwaway PostgreSQL cluster on 127.0.0.1 and a free port.
 * Returns { url, port, stop, dataDir, binDir }. stop() is idempotent; it is also
 * run synchronously when this process exits, so a crash never leaves a server behind.
 */
export async function startPostgres({ log, handleSignals = true } = {}) {
  const say = typeof log === 'function' ? log : () => {};
  const binDir = findPostgresBinDir();
  if (!binDir) {
    throw new Error(
      'No PostgreSQL server binaries found (looked at `pg_config --bindir` and /usr/lib/postgresql/*/bin). ' +
        'Install them with `apt-get install postgresql`.',
    );
  }
  const bin = (name) => path.join(binDir, name);
  const user = postgresUser();
  const t0 = Date.now();

  const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-pg-'));
  const dataDir = path.join(tmp, 'data');
  const sockDir = path.join(tmp, 'sock');
  const logFile = path.join(tmp, 'postgres.log');
  if (user) {
    // mkdtemp creates the dir 0700 owned by root: hand it to postgres.
    chownSync(tmp, user.uid, user.gid);
  }
  chmodSync(tmp, 0o700);

  let state = 'starting';
  const signals = handleSignals ? ['SIGINT', 'SIGTERM', 'SIGHUP'] : [];
  const onSignal = (sig) => {
    stopSync();
    // If nobody else handles this signal, die of it as we would have without us.
    if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
  };
  const unhook = () => {
    process.removeListener('exit', stopSync);
    for (const sig of signals) process.removeListener(sig, onSignal);
  };
  const stopSync = () => {
    if (state === 'stopped') return;
    state = 'stopped';
    unhook();
    if (existsSync(path.join(dataDir, 'postmaster.pid'))) {
      runSync(user, bin('pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', '-t', '20', 'stop']);
    }
    rmSync(tmp, { recursive: true, force: true });
  };
  // Last resort: a plain exit (including process.exit() from signal handlers and
  // uncaught exceptions) still stops the server.
  process.on('exit', stopSync);
  for (const sig of signals) process.on(sig, onSignal);

  try {
    await initCluster(user, binDir, dataDir, say);
    const tInit = Date.now();

    await run(user, 'mkdir', ['-m', '700', sockDir]);
    const port = await freePort();
    const conf = [
      `listen_addresses = '127.0.0.1'`,
      `port = ${port}`,
      `unix_socket_directories = '${sockDir}'`,
      'fsync = off',
      'synchronous_commit = off',
      'full_page_writes = off',
      'max_connections = 300',
      'shared_buffers = 256MB',
      'log_min_messages = warning',
      '',
    ].join('\n');
    // postgresql.auto.conf is read after postgresql.conf: our settings win.
    const autoConf = path.join(dataDir, 'postgresql.auto.conf');
    writeFileSync(path.join(tmp, 'auto.conf'), conf);
    await run(user, 'cp', [path.join(tmp, 'auto.conf'), autoConf]);

    await run(user, bin('pg_ctl'), ['-D', dataDir, '-l', logFile, '-w', '-t', '60', '-s', 'start']).catch((err) => {
      let tail = '';
      try {
        tail = runSync(user, 'tail', ['-n', '30', logFile]).stdout ?? '';
      } catch {
        // ignore
      }
      throw new Error(`${err.message}${tail ? `\n--- postgres.log ---\n${tail}` : ''}`);
    });
    state = 'running';
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    say(`postgres ${path.basename(path.dirname(binDir))} started on ${url} in ${Date.now() - t0} ms (its data directory ${tInit - t0} ms)`);

    let stopping = null;
    const stop = () => {
      if (stopping) return stopping;
      stopping = (async () => {
        if (state === 'stopped') return;
        try {
          await run(user, bin('pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', '-t', '30', '-s', 'stop']);
        } catch (err) {
          say(`pg_ctl stop failed, forcing: ${err.message}`);
          runSync(user, bin('pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', '-s', 'stop']);
        }
        state = 'stopped';
        unhook();
        rmSync(tmp, { recursive: true, force: true });
        say('postgres stopped');
      })();
      return stopping;
    };
    return { url, port, stop, stopSync, dataDir, binDir };
  } catch (err) {
    stopSync();
    throw err;
  }
}

// ---- CLI ------------------------------------------------------------------
const isMain = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const log = (msg) => process.stderr.write(`${msg}\n`);
  let pg;
  let exiting = false;
  const shutdown = async () => {
    if (exiting) return;
    exiting = true;
    if (!pg) return; // still starting: stopped right after start-up below
    try {
      await pg.stop();
    } finally {
      process.exit(0);
    }
  };
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => void shutdown());
  }
  try {
    pg = await startPostgres({ log, handleSignals: false });
  } catch (err) {
    log(err.message);
    process.exit(1);
  }
  if (exiting) {
    await pg.stop();
    process.exit(0);
  } else {
    process.stdout.write(`${pg.url}\n`);
    log('Press Ctrl-C (or send SIGTERM) to stop it and delete its data.');
    // Keep the event loop alive until a signal arrives.
    setInterval(() => {}, 1 << 30);
  }
}

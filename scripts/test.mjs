// `npm test`: build, then every test set, then one summary.
//
//   build     npm run build (SKIP_BUILD=1 skips it)
//   pglite    api set (vitest.config.ts) with TEST_DB=pglite
//   postgres  api set with TEST_DB=postgres, TEST_DATABASE_URL=<throwaway cluster>
//   browser   test/browser/** (vitest.browser.config.ts, one file at a time)
//   cluster   test/cluster/** with TEST_DB=postgres, TEST_DATABASE_URL: beside the pglite
//             and postgres sets (its tests mostly wait on outages: a third of a core),
//             its output printed when it ends
//
// TEST_ONLY=pglite,postgres,browser,cluster runs just those steps. Extra CLI
// arguments go to every vitest run (`npm test -- test/rooms -t "creates"`).
// TEST_DATABASE_URL set in the environment: used instead of starting a cluster.
// TEST_REPORT_DIR=DIR keeps each set's vitest JSON report (DIR/<set>.json).
// The last line printed is always `N passed, N failed`; the exit code is 0 only
// if every step passed.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPostgres, findPostgresBinDir } from './postgres.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

const STEPS = ['pglite', 'postgres', 'browser', 'cluster'];
const extraArgs = process.argv.slice(2);
const inCI = process.env.CI === 'true' || process.env.CI === '1';
const skipBuild = ['1', 'true', 'yes'].includes((process.env.SKIP_BUILD ?? '').toLowerCase());

let only = STEPS;
if (process.env.TEST_ONLY) {
  only = process.env.TEST_ONLY.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = only.filter((s) => !STEPS.includes(s));
  if (bad.length) {
    console.error(`TEST_ONLY: unknown step(s) ${bad.join(', ')}; use a comma list of ${STEPS.join(', ')}`);
    process.exit(2);
  }
}

const tmp = mkdtempSync(path.join(os.tmpdir(), 'parley-test-'));
// TEST_REPORT_DIR=DIR: each set's vitest JSON report is kept there as <set>.json (per-file and per-test times).
const reportDir = process.env.TEST_REPORT_DIR ? path.resolve(process.env.TEST_REPORT_DIR) : tmp;
mkdirSync(reportDir, { recursive: true });
/** @type {{name: string, ok: boolean, passed: number, failed: number, skipped: number, text: string, failures: string[]}[]} */
const results = [];
/** The vitest runs under way: an interrupt stops each with its workers. */
const children = new Set();
let pg = null;
/** The cluster starting beside the build: resolves to { started, ms } or { error }. */
let pgStarting = null;
let interrupted = false;

const banner = (msg) => console.log(`\n\x1b[1m▶ ${msg}\x1b[0m`);
const secs = (ms) => `${(ms / 1000).toFixed(1)}s`;

function cleanup() {
  try {
    pg?.stopSync();
  } catch {
    // best effort
  }
  rmSync(tmp, { recursive: true, force: true });
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${sig}: stopping`);
    for (const child of children) {
      // The child leads its own process group: signal it with its workers.
      try {
        process.kill(-child.pid, sig);
      } catch {
        child.kill(sig);
      }
    }
    cleanup();
    const sum = (k) => results.reduce((n, r) => n + r[k], 0);
    console.log(`${sum('passed')} passed, ${sum('failed') + 1} failed`);
    process.exit(sig === 'SIGINT' ? 130 : 143);
  });
}
process.on('exit', cleanup);

/**
 * Run a command in its own process group (so an interrupt can stop it and every
 * worker it forked); resolves to its exit code. Its output is this process's,
 * or with `logFile` written there (a set running beside another).
 */
function run(cmd, args, env = process.env, logFile = null) {
  return new Promise((resolve) => {
    const log = logFile ? createWriteStream(logFile) : null;
    const child = spawn(cmd, args, { stdio: log ? ['ignore', 'pipe', 'pipe'] : 'inherit', env, detached: true });
    children.add(child);
    if (log) {
      child.stdout.pipe(log, { end: false });
      child.stderr.pipe(log, { end: false });
    }
    let finished = false;
    const done = async (code) => {
      if (finished) return;
      finished = true;
      children.delete(child);
      if (log) {
        // What is still in the pipes, unless a process the set left behind holds them open.
        const drained = (stream) => new Promise((ok) => (stream.readableEnded ? ok() : stream.once('end', ok)));
        await Promise.race([Promise.all([drained(child.stdout), drained(child.stderr)]), new Promise((ok) => setTimeout(ok, 2000))]);
        await new Promise((ok) => log.end(ok));
      }
      resolve(code);
    };
    child.on('error', (err) => {
      console.error(`${cmd}: ${err.message}`);
      done(127);
    });
    child.on('exit', (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

/** True if dir holds a *.test.ts file anywhere below it. */
function hasTestFiles(dir) {
  if (!existsSync(dir)) return false;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory() ? hasTestFiles(p) : e.name.endsWith('.test.ts')) return true;
  }
  return false;
}

const vitestBin = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');

/**
 * One vitest run. env: extra variables (undefined values are removed). beside:
 * it runs beside another set, its output kept and printed when it ends.
 */
async function vitest(name, { config, env, beside = false }) {
  const title = `${name}: vitest${config ? ` --config ${config}` : ''}${extraArgs.length ? ` ${extraArgs.join(' ')}` : ''}`;
  const logFile = beside ? path.join(tmp, `${name}.log`) : null;
  banner(beside ? `${title} (beside the other sets; its output when it ends)` : title);
  const jsonFile = path.join(reportDir, `${name}.json`);
  const args = [
    vitestBin,
    'run',
    ...(config ? ['--config', config] : []),
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${jsonFile}`,
    '--passWithNoTests',
    ...extraArgs,
  ];
  const fullEnv = { ...process.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete fullEnv[k];
    else fullEnv[k] = v;
  }
  const t0 = Date.now();
  const code = await run(process.execPath, args, fullEnv, logFile);
  const took = secs(Date.now() - t0);
  if (logFile) {
    banner(`${title}: its output`);
    process.stdout.write(readFileSync(logFile, 'utf8'));
  }

  let report = null;
  try {
    report = JSON.parse(readFileSync(jsonFile, 'utf8'));
  } catch {
    // no report: vitest died before writing it
  }
  if (!report) {
    return record(name, false, 0, 1, 0, `vitest exited ${code} without a report (${took}); counted as 1 failure`);
  }
  const passed = report.numPassedTests ?? 0;
  let failed = report.numFailedTests ?? 0;
  const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  const files = report.testResults?.length ?? 0;
  let note = '';
  if (code !== 0 && failed === 0) {
    // A file that fails to load, or an unhandled error, fails the run without a failed test.
    failed = 1;
    note = `; vitest exited ${code} with no failed test (file load or unhandled error), counted as 1 failure`;
  }
  if (files === 0 && code === 0) {
    return record(name, true, 0, 0, 0, `no test files matched (${took})`);
  }
  return record(
    name,
    code === 0,
    passed,
    failed,
    skipped,
    `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''} in ${files} file(s) (${took})${note}`,
    failedTests(report),
    slowestFiles(report),
  );
}

/** The files that took longest in a vitest JSON report: where a set's time goes. */
function slowestFiles(report, count = 5) {
  return (report.testResults ?? [])
    .map((file) => ({ rel: path.relative(root, file.name ?? ''), ms: (file.endTime ?? 0) - (file.startTime ?? 0) }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count)
    .map(({ rel, ms }) => `${secs(ms).padStart(7)} ${rel}`);
}

/**
 * The failed tests of a vitest JSON report, a line each with the first line of
 * the error: the summary repeats them, because CI often keeps only the tail.
 */
function failedTests(report) {
  const lines = [];
  for (const file of report.testResults ?? []) {
    const rel = path.relative(root, file.name ?? '');
    for (const t of file.assertionResults ?? []) {
      if (t.status !== 'failed') continue;
      const message = String(t.failureMessages?.[0] ?? '');
      const first = message.split('\n')[0].slice(0, 200);
      // fast-check puts the seed on the line after its first: without it, a random counterexample is lost.
      const seed = /\bseed: (-?\d+)/.exec(message)?.[1];
      const replay = seed ? ` [seed ${seed}: FC_SEED=${seed} npx vitest run ${rel} -t ${JSON.stringify(t.title)}]` : '';
      lines.push(`${rel} > ${t.fullName ?? t.title}: ${first}${replay}`);
    }
    if ((file.assertionResults ?? []).length === 0 && file.status === 'failed') {
      lines.push(`${rel}: ${String(file.message ?? '').split('\n')[0].slice(0, 200)}`);
    }
  }
  return lines;
}

function record(name, ok, passed, failed, skipped, text, failures = [], slowest = []) {
  const r = { name, ok, passed, failed, skipped, text, failures, slowest };
  results.push(r);
  return r;
}

async function main() {
  // The PostgreSQL cluster the postgres and cluster sets need starts now, beside the build
  // (it is mostly waiting on the disk).
  const needPg = only.includes('postgres') || (only.includes('cluster') && hasTestFiles('test/cluster'));
  if (needPg && !process.env.TEST_DATABASE_URL) {
    const t0 = Date.now();
    pgStarting = startPostgres({ log: (m) => console.log(m) }).then(
      (started) => ({ started, ms: Date.now() - t0 }),
      (error) => ({ error }),
    );
  }

  // a. build
  if (skipBuild) {
    record('build', true, 0, 0, 0, 'skipped (SKIP_BUILD=1)');
  } else {
    banner('build: npm run build');
    const t0 = Date.now();
    const code = await run('npm', ['run', 'build']);
    if (code === 0) record('build', true, 0, 0, 0, `passed (${secs(Date.now() - t0)})`);
    else record('build', false, 0, 1, 0, `FAILED, exit ${code} (${secs(Date.now() - t0)}); counted as 1 failure`);
  }

  // b. PostgreSQL, which the postgres and cluster sets need, ready by now
  let dbUrl = null;
  if (needPg) {
    if (process.env.TEST_DATABASE_URL) {
      dbUrl = process.env.TEST_DATABASE_URL;
      record('pg-start', true, 0, 0, 0, `using TEST_DATABASE_URL from the environment`);
    } else {
      const t0 = Date.now();
      const outcome = await pgStarting;
      if (outcome.started) {
        pg = outcome.started;
        dbUrl = pg.url;
        record('pg-start', true, 0, 0, 0, `PostgreSQL started beside the build in ${secs(outcome.ms)}, ${secs(Date.now() - t0)} waited for here (${pg.binDir})`);
      } else {
        const err = outcome.error;
        const missing = !findPostgresBinDir();
        const how = missing
          ? 'PostgreSQL server binaries are missing: install them with `sudo apt-get install postgresql` ' +
            '(or set TEST_DATABASE_URL to a server you run, or TEST_ONLY=pglite,browser to leave PostgreSQL out)'
          : `could not start PostgreSQL${inCI ? ' (CI=true: never skipped)' : ''}`;
        console.error(`\n${how}\n${err.message}`);
        record('pg-start', false, 0, 1, 0, `FAILED: ${how}; counted as 1 failure`);
      }
    }
  }

  // c. the cluster set, beside the api sets when they run (test/README.md, "Where the time goes")
  let cluster = Promise.resolve();
  if (only.includes('cluster')) {
    if (!hasTestFiles('test/cluster')) {
      record('cluster', true, 0, 0, 0, 'no test files in test/cluster/ yet');
      console.log('\ncluster: no test files in test/cluster/ yet, going on');
    } else if (!dbUrl) {
      record('cluster', false, 0, 0, 0, 'not run: no PostgreSQL');
    } else {
      cluster = vitest('cluster', {
        config: 'vitest.browser.config.ts',
        env: { PARLEY_TEST_SET: 'cluster', TEST_DB: 'postgres', TEST_DATABASE_URL: dbUrl },
        beside: only.includes('pglite') || only.includes('postgres'),
      });
    }
  }

  // d. the api set on PGlite, then on PostgreSQL
  if (only.includes('pglite')) {
    await vitest('pglite', { env: { TEST_DB: 'pglite', TEST_DATABASE_URL: undefined } });
  }
  if (only.includes('postgres')) {
    if (dbUrl) await vitest('postgres', { env: { TEST_DB: 'postgres', TEST_DATABASE_URL: dbUrl } });
    else record('postgres', false, 0, 0, 0, 'not run: no PostgreSQL');
  }
  await cluster;

  // e. the browser set, alone: its calls need the machine's CPU
  if (only.includes('browser')) {
    if (!hasTestFiles('test/browser')) {
      record('browser', true, 0, 0, 0, 'no test files in test/browser/ yet');
      console.log('\nbrowser: no test files in test/browser/ yet, going on');
    } else {
      await vitest('browser', {
        config: 'vitest.browser.config.ts',
        env: { PARLEY_TEST_SET: 'browser', TEST_DB: 'pglite', TEST_DATABASE_URL: undefined },
      });
    }
  }
}

let crashed = null;
try {
  await main();
} catch (err) {
  crashed = err;
  console.error(err);
} finally {
  // Started beside the build but never used (a crash before the postgres set): stopped all the same.
  if (!pg && pgStarting) pg = (await pgStarting).started ?? null;
  if (pg) {
    await pg.stop().catch((err) => console.error(`stopping PostgreSQL: ${err.message}`));
  }
}

if (crashed) record('runner', false, 0, 1, 0, `scripts/test.mjs crashed: ${crashed.message}`);
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
const allOk = results.every((r) => r.ok);

console.log('\n\x1b[1m──── slowest files ────\x1b[0m');
for (const r of results) for (const line of r.slowest) console.log(`  ${r.name.padEnd(9)} ${line}`);
console.log('\n\x1b[1m──── summary ────\x1b[0m');
for (const r of results) {
  console.log(`${r.ok ? 'ok  ' : 'FAIL'}  ${r.name.padEnd(9)} ${r.text}`);
  for (const f of r.failures) console.log(`        ✗ ${f}`);
}
// The very last line: the plain closing line CI reads.
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = allOk && failed === 0 ? 0 : 1;

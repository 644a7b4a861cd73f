// `npm run test:under-load`: the whole suite, several times in a row, on a
// fresh clone of the committed tree, while another process keeps one core
// busy (stress-ng --cpu 1). A test that fails only because the machine is slow
// shows here before it turns CI red (test/README.md, "Under load").
//
//   RUNS=3             how many runs in a row (stops at the first red one)
//   LOAD_CPUS=1        cores stress-ng keeps busy
//   KEEP_CLONE=1       keep the clone for a look afterwards
//
// Prints each run's closing line and time, then `under load: N of M runs green`;
// exits 0 only if every run passed.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const runs = Number(process.env.RUNS ?? 3);
const loadCpus = Number(process.env.LOAD_CPUS ?? 1);

if (spawnSync('stress-ng', ['--version']).error) {
  console.error('stress-ng is missing: install it with `sudo apt-get install stress-ng`');
  process.exit(2);
}

const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim();
if (spawnSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).stdout.trim()) {
  console.log(`note: uncommitted changes are not tested; the clone is of ${head}`);
}
const clone = mkdtempSync(path.join(os.tmpdir(), 'parley-under-load-'));
const step = (cmd, args, cwd) => {
  const result = spawnSync(cmd, args, { cwd, stdio: 'inherit' });
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${result.status})`);
};

let load = null;
let current = null;
const stopAll = () => {
  load?.kill('SIGTERM');
  if (current?.exitCode === null) process.kill(-current.pid, 'SIGTERM');
  if (process.env.KEEP_CLONE !== '1') rmSync(clone, { recursive: true, force: true });
};
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => (stopAll(), process.exit(130)));

/** One `npm test` in the clone; resolves to its closing line, its time and whether it passed. */
function npmTest() {
  return new Promise((resolve) => {
    const started = Date.now();
    let closing = '';
    current = spawn('npm', ['test'], { cwd: clone, detached: true, env: { ...process.env, CI: 'true' }, stdio: ['ignore', 'pipe', 'inherit'] });
    current.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      for (const line of String(chunk).split('\n')) if (/^\d+ passed, \d+ failed$/.test(line)) closing = line;
    });
    current.on('exit', (code) => resolve({ ok: code === 0, closing: closing || `no closing line (exit ${code})`, minutes: (Date.now() - started) / 60_000 }));
  });
}

const results = [];
try {
  step('git', ['clone', '--quiet', root, clone], root);
  step('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], clone);
  load = spawn('stress-ng', ['--cpu', String(loadCpus), '--quiet'], { stdio: 'ignore' });
  console.log(`stress-ng keeps ${loadCpus} of ${os.cpus().length} cores busy; ${runs} runs of npm test on ${head}`);
  for (let i = 1; i <= runs; i++) {
    const result = await npmTest();
    results.push(result);
    console.log(`\nunder load, run ${i}: ${result.closing} in ${result.minutes.toFixed(1)} min`);
    if (!result.ok) break;
  }
} finally {
  stopAll();
}
for (const [i, r] of results.entries()) console.log(`run ${i + 1}: ${r.ok ? 'green' : 'RED'}  ${r.closing}  ${r.minutes.toFixed(1)} min`);
const green = results.filter((r) => r.ok).length;
console.log(`under load: ${green} of ${runs} runs green (${head})`);
process.exitCode = green === runs ? 0 : 1;

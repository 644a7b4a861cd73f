// A Janus that Parley starts and supervises itself: SFU=janus without
// JANUS_URLS (docs/design.md, "Group calls through an SFU"). Its
// configuration is generated into a temporary folder (src/sfu/janus-config.ts),
// its HTTP API listens on 127.0.0.1 only, and a Janus that dies is started
// again at the same address, at once, then after 0.25 s doubling with each
// failure in a row up to 30 s; the hub recreates the rooms it lost. One that
// stops answering (hung), or that the kernel shows stopped (SIGSTOP), is
// killed and so started again. It stops with the node, even a node killed with -9: Node
// cannot ask the kernel for a death signal (PR_SET_PDEATHSIG), so Janus runs
// under a two-line shell wrapper whose watcher reads a pipe from the node and
// kills Janus when the pipe closes (JANUS_WRAPPER).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.js';
import { writeJanusConfig } from './sfu/janus-config.js';
import { janusAnswers } from './sfu/janus-client.js';

/**
 * The first death after a healthy run is started again at once (a Janus killed
 * for hanging, or killed -9: every ms is media lost), then after 0.25 s,
 * doubling with each failure in a row up to 30 s.
 */
const FIRST_RETRY_MS = 250;
const LONGEST_RETRY_MS = 30_000;
/** A Janus that answers `info` within this long of its start is up; on this machine it takes well under a second. */
const START_TIMEOUT_MS = 20_000;
/** A starting Janus is asked this often whether it answers (a refused connection costs nothing). */
const START_POLL_MS = 25;
/**
 * Answering and up this long: the next death counts as a first failure again
 * (10 s made a Janus killed every few seconds, each time after it served
 * again, wait 0.25, 0.5, 1, 2, 4, 8 s: bench/README.md, "Issue 41: faults").
 */
export const HEALTHY_AFTER_MS = 3_000;
/**
 * Janus is asked for `info` this often, without waiting for the previous
 * answer; it is hung, and killed, once an ask has waited HUNG_AFTER_MS with no
 * answer to anything since it was sent. Asking every second noticed a hang
 * 2.5 to 3.5 s after it began; every 250 ms, 2.5 to 2.75 s. 2 s was missed by
 * a Janus that was only slow, at a load average of 50 (src/sfu/janus-client.ts).
 */
const WATCH_EVERY_MS = 250;
export const HUNG_AFTER_MS = 2_500;
/**
 * A Janus the kernel shows stopped (state T in /proc: SIGSTOP, SIGTSTP) on two
 * looks in a row, WATCH_EVERY_MS apart, is killed without waiting for the
 * bound: a stopped process answers nothing, however loaded the machine, so
 * that signal cannot be a slow Janus (docs/design.md, "Group calls through an SFU", Faults).
 */
const STOPPED_LOOKS = 2;

/**
 * `sh -c JANUS_WRAPPER parley-janus janus <args>`: a watcher holding the
 * node's pipe on its stdin (fd 3 here: an asynchronous list's own stdin is
 * /dev/null), then `exec janus`, so that Janus keeps the shell's pid (the one
 * the node supervises). The pipe closing without the word `exit` (the node is
 * gone, however it died) kills Janus; the node writes `exit` once Janus has
 * exited, so that the watcher never kills a pid reused since.
 */
const JANUS_WRAPPER = 'exec 3<&0; janus=$$; (read -r word <&3; [ "$word" = exit ] || kill -KILL "$janus") </dev/null >/dev/null 2>&1 & exec "$@" </dev/null 3<&-';

export interface LocalJanus {
  /** The HTTP API's URL (what JANUS_URLS would name). */
  url: string;
  apiSecret: string;
  /** The running process's id (tests kill it to see the supervision work). */
  readonly pid: number | undefined;
  /** Resolves once a Janus answers again (after a restart). */
  whenUp(): Promise<void>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilAnswers(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`janus exited at start (${child.exitCode ?? child.signalCode})`);
    if (await janusAnswers(url, 500)) return;
    await new Promise((resolve) => setTimeout(resolve, START_POLL_MS));
  }
  throw new Error(`janus did not answer at ${url} within ${START_TIMEOUT_MS / 1000} s`);
}

/** Whether the kernel shows the process stopped (state T: SIGSTOP, SIGTSTP); false where /proc cannot tell. */
function stopped(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').startsWith('T');
  } catch {
    return false;
  }
}

/**
 * Asks the running Janus for `info` every WATCH_EVERY_MS, without waiting for
 * the previous answer; once an ask has gone HUNG_AFTER_MS with no answer to
 * anything since it was sent, Janus is killed with -9 (a frozen process too),
 * and its exit starts it again. One the kernel shows stopped STOPPED_LOOKS
 * times in a row is killed at once (`watchStopped`). A Janus still starting is
 * not asked. `hung` hears why before the kill.
 */
function watchForHang(url: string, running: () => ChildProcess | null, watchStopped: boolean, hung: (child: ChildProcess, why: string) => void): ReturnType<typeof setInterval> {
  let watched: ChildProcess | null = null;
  let lastAnswerAt = 0;
  let stoppedLooks = 0;
  const watch = setInterval(() => {
    const current = running();
    if (!current || current.exitCode !== null || current.signalCode !== null || !current.pid || !answeredOnce.has(current)) return;
    if (watched !== current) {
      watched = current;
      lastAnswerAt = Date.now();
      stoppedLooks = 0;
    }
    stoppedLooks = watchStopped && stopped(current.pid) ? stoppedLooks + 1 : 0;
    if (stoppedLooks >= STOPPED_LOOKS) return hung(current, 'stopped');
    const askedAt = Date.now();
    void janusAnswers(url, HUNG_AFTER_MS).then((answers) => {
      if (running() !== current || current.exitCode !== null || current.signalCode !== null) return;
      if (answers) lastAnswerAt = Math.max(lastAnswerAt, Date.now());
      // Slow but alive: something asked later was answered meanwhile.
      else if (lastAnswerAt < askedAt) hung(current, 'unanswered');
    });
  }, WATCH_EVERY_MS);
  watch.unref();
  return watch;
}

/** Janus processes that answered since their start: only those are watched (a start has its own bound). */
const answeredOnce = new WeakSet<ChildProcess>();

/** `watchStopped: false` leaves a stopped Janus to the HUNG_AFTER_MS bound, as a hang the kernel does not show (bench/sfu-recovery.bench.ts measures both). */
export async function startLocalJanus(config: Readonly<Config>, log: FastifyBaseLogger, options: { binary?: string; watchStopped?: boolean } = {}): Promise<LocalJanus> {
  const { binary = 'janus', watchStopped = true } = options;
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-janus-'));
  const httpPort = await freePort();
  const apiSecret = config.janusApiSecret ?? randomBytes(24).toString('base64url');
  const configFile = writeJanusConfig({
    folder,
    httpPort,
    apiSecret,
    rtpPorts: config.janusRtpPorts,
    publicAddress: config.janusPublicIp,
    interfaces: config.janusInterfaces,
    stunServer: null,
  });
  const url = `http://127.0.0.1:${httpPort}/janus`;
  let child: ChildProcess | null = null;
  let stopping = false;
  let failures = 0;
  let up: Promise<void> = Promise.resolve();
  /** The last lines Janus printed, for the log line of a failed start. */
  const recent: string[] = [];

  const run = (): Promise<void> => {
    const started = Date.now();
    const current = spawn('sh', ['-c', JANUS_WRAPPER, 'parley-janus', binary, '-C', configFile, '-F', folder, '-o'], { stdio: ['pipe', 'pipe', 'pipe'] });
    child = current;
    // The watcher may be gone already when the node writes to it; nothing to do then.
    current.stdin!.on('error', () => undefined);
    for (const stream of [current.stdout!, current.stderr!]) {
      stream.setEncoding('utf8').on('data', (chunk: string) => {
        recent.push(...chunk.split('\n').filter(Boolean));
        recent.splice(0, Math.max(0, recent.length - 20));
      });
    }
    current.on('exit', (code, signal) => {
      current.stdin!.end('exit\n');
      if (stopping) return;
      failures = answeredOnce.has(current) && Date.now() - started > HEALTHY_AFTER_MS ? 1 : failures + 1;
      const delay = failures === 1 ? 0 : Math.min(FIRST_RETRY_MS * 2 ** (failures - 2), LONGEST_RETRY_MS);
      log.warn({ code, signal, pid: current.pid, restartInMs: delay, output: recent.slice(-5) }, 'local janus exited: starting it again');
      up = new Promise((resolve) => setTimeout(resolve, delay)).then(() => (stopping ? undefined : run()));
      up.catch((error: unknown) => log.error({ err: error }, 'local janus did not start again'));
    });
    log.info({ pid: current.pid }, 'local janus spawned');
    return waitUntilAnswers(url, current).then(() => {
      answeredOnce.add(current);
      log.info({ pid: current.pid, startMs: Date.now() - started }, 'local janus answering');
    });
  };

  try {
    up = run();
    await up;
  } catch (error) {
    stopping = true;
    (child as ChildProcess | null)?.kill('SIGKILL');
    fs.rmSync(folder, { recursive: true, force: true });
    throw new Error(`could not start a local Janus (${binary}): ${(error as Error).message}\n${recent.slice(-10).join('\n')}`);
  }
  log.info({ url, rtpPorts: `${config.janusRtpPorts.min}-${config.janusRtpPorts.max}` }, 'local janus started');
  const killed = new WeakSet<ChildProcess>();
  const watch = watchForHang(url, () => (stopping ? null : child), watchStopped, (current, why) => {
    if (killed.has(current)) return;
    killed.add(current);
    log.warn({ pid: current.pid, why, unansweredMs: why === 'unanswered' ? HUNG_AFTER_MS : undefined }, 'local janus stopped answering: killing it to start it again');
    current.kill('SIGKILL');
  });

  return {
    url,
    apiSecret,
    get pid() {
      return child?.pid;
    },
    whenUp: () => up,
    async stop() {
      stopping = true;
      clearInterval(watch);
      const current = child;
      if (current && current.exitCode === null && current.signalCode === null) {
        const exited = new Promise((resolve) => current.once('exit', resolve));
        current.kill('SIGTERM');
        const killer = setTimeout(() => current.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killer);
      }
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}

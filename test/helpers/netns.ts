// A call participant on a network of its own: a Linux network namespace joined
// to the root namespace by a veth pair, so the test can take that network down,
// change its address, cap its bandwidth or lose its packets while the rest of
// the machine (the server, the other participant) is untouched
// (test/README.md, "Real networks").
//
//   root namespace                       namespace prl-<pid>-<n>
//   server, host's Chromium              guest's Chromium (chromiumWrapper())
//   prl<pid>h<n>  10.213.X.1/24  <-veth->  prl<pid>g<n>  10.213.X.2/24, default via .1
//   (IPv4 only: no link-local IPv6 path that an address change would leave up)
//
// Needs root, iproute2 (ip, tc) and nftables (nft). The kernel here has tbf but
// no netem, so random loss is an nftables rule rather than a qdisc.
// Every name carries the creating process's pid: cleanupStale() removes only
// what a process that is gone left behind, never a concurrent run's network.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface GuestNetwork {
  /** Namespace name, e.g. prl-1234-1. */
  readonly name: string;
  /** The root-side address of the veth pair: the server listens here. */
  readonly hostAddress: string;
  /** The guest's current address inside the namespace. */
  guestAddress(): string;
  /** Like Wi-Fi to cellular: the old address goes away, a new one in the same /24 comes (returned). */
  changeAddress(): string;
  /** An outage: the guest-side device goes down inside the namespace. */
  linkDown(): void;
  linkUp(): void;
  /** Caps both directions to `kbit` kbit/s (tbf on each end's egress). */
  cap(kbit: number): void;
  uncap(): void;
  /** Drops `percent` % of UDP packets in both directions at random (100: all UDP, a network that blocks it); 0 removes the rule. */
  loss(percent: number): void;
  /** An executable that starts /usr/bin/chromium inside the namespace, for playwright's executablePath. */
  chromiumWrapper(): string;
  /**
   * An executable (a script `exec ip netns exec NS <binary> "$@"`) that starts
   * `binary` inside the namespace, for a launcher's executablePath; destroy() removes it.
   */
  wrapperFor(binary: string): string;
  /**
   * Makes 127.0.0.1:`port` in the root namespace reach 127.0.0.1:`port` inside
   * the namespace (where a browser's remote-debugging server listens: puppeteer
   * drives Firefox over a WebSocket, not a pipe). Through a Unix socket, which
   * no network namespace separates, so the guest's address changes and outages
   * never touch it. Resolves when both ends listen; destroy() closes them.
   */
  forwardLoopback(port: number): Promise<void>;
  /** Removes the namespace, the links, the nft tables and the wrapper; never throws. */
  destroy(): void;
}

const PREFIX = 'prl';
const inCI = process.env.CI === 'true' || process.env.CI === '1';
let counter = 0;
const live = new Set<GuestNetwork>();

/** Where `command` is: on PATH, or in the sbin folders a non-login root shell may lack on its PATH. */
function which(command: string): string | null {
  const dirs = [...(process.env.PATH ?? '').split(':').filter(Boolean), '/usr/sbin', '/sbin', '/usr/bin', '/bin'];
  for (const dir of dirs) {
    try {
      fs.accessSync(path.join(dir, command), fs.constants.X_OK);
      return path.join(dir, command);
    } catch {
      // next folder
    }
  }
  return null;
}

function run(cmd: string, ...args: string[]): string {
  try {
    return execFileSync(which(cmd) ?? cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`${cmd} ${args.join(' ')} failed: ${stderr || (error as Error).message}`);
  }
}
const quietly = (fn: () => unknown) => {
  try {
    fn();
  } catch {
    // cleanup goes on with the next step
  }
};
const inNs = (ns: string, cmd: string, ...args: string[]) => run('ip', 'netns', 'exec', ns, which(cmd) ?? cmd, ...args);

/** Why guest networks cannot be made here (null when they can). */
export function networkUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'network namespace tests need root (ip netns, tc, nft)';
  const missing = [['ip', 'iproute2'], ['tc', 'iproute2'], ['nft', 'nftables']].filter(([cmd]) => !which(cmd!));
  if (missing.length) return `network namespace tests need ${missing.map(([c, p]) => `${c} (apt-get install ${p})`).join(', ')}`;
  return null;
}

/**
 * For a test file's top: throws in CI (a missing tool must fail the run, never
 * skip it); elsewhere returns the reason to skip, or null to run.
 */
export function skipReasonOrThrow(): string | null {
  const reason = networkUnavailable();
  if (reason && inCI) throw new Error(`${reason} (CI=true: never skipped)`);
  if (reason) console.warn(`skipping the network namespace tests: ${reason}`);
  return reason;
}

/** A free 10.213.X.0/24: X starts from the pid (so concurrent runs rarely meet) and skips any in use here. */
function freeSubnet(): number {
  const used = run('ip', '-4', '-o', 'addr', 'show');
  for (let i = 0; i < 254; i++) {
    const x = ((process.pid + counter + i) % 254) + 1;
    if (!used.includes(`10.213.${x}.`)) return x;
  }
  throw new Error('no free 10.213.X.0/24 for a guest network');
}

export function createGuestNetwork(name?: string): GuestNetwork {
  const reason = networkUnavailable();
  if (reason) throw new Error(reason);
  const n = ++counter;
  const ns = name ?? `${PREFIX}-${process.pid}-${n}`;
  // Interface names have at most 15 characters: prl + pid (≤ 7 digits) + h/g + n.
  const hostDev = `${PREFIX}${process.pid}h${n}`;
  const guestDev = `${PREFIX}${process.pid}g${n}`;
  const x = freeSubnet();
  const hostAddress = `10.213.${x}.1`;
  let guestHost = 2;
  const guest = () => `10.213.${x}.${guestHost}`;
  // nftables table names: one in the namespace (guest to host), one in the root namespace (host to guest).
  const lossTable = `${PREFIX}_loss_${process.pid}_${n}`;
  const wrappers = new Set<string>();
  const forwarders: { server: net.Server; child: ChildProcess; socket: string }[] = [];
  // The default route goes with the address or the link: put it back after either.
  const route = () => inNs(ns, 'ip', 'route', 'replace', 'default', 'via', hostAddress, 'dev', guestDev);

  const network: GuestNetwork = {
    name: ns,
    hostAddress,
    guestAddress: guest,
    changeAddress() {
      const old = guest();
      guestHost = guestHost >= 250 ? 2 : guestHost + 1;
      // Old one out first, as when a phone leaves Wi-Fi (deleting a primary address would take a
      // secondary added before it along anyway); the routes go with it and come back with route().
      inNs(ns, 'ip', 'addr', 'del', `${old}/24`, 'dev', guestDev);
      inNs(ns, 'ip', 'addr', 'add', `${guest()}/24`, 'dev', guestDev);
      route();
      return guest();
    },
    linkDown() {
      inNs(ns, 'ip', 'link', 'set', guestDev, 'down');
    },
    linkUp() {
      inNs(ns, 'ip', 'link', 'set', guestDev, 'up');
      route();
    },
    cap(kbit) {
      // tbf shapes egress only: one on each end caps both directions.
      const tbf = ['root', 'tbf', 'rate', `${kbit}kbit`, 'burst', '16kbit', 'latency', '300ms'];
      inNs(ns, 'tc', 'qdisc', 'replace', 'dev', guestDev, ...tbf);
      run('tc', 'qdisc', 'replace', 'dev', hostDev, ...tbf);
    },
    uncap() {
      quietly(() => inNs(ns, 'tc', 'qdisc', 'del', 'dev', guestDev, 'root'));
      quietly(() => run('tc', 'qdisc', 'del', 'dev', hostDev, 'root'));
    },
    loss(percent) {
      quietly(() => inNs(ns, 'nft', 'delete', 'table', 'inet', lossTable));
      quietly(() => run('nft', 'delete', 'table', 'inet', lossTable));
      if (percent <= 0) return;
      // `counter`: `nft list ruleset` then shows how many packets were dropped.
      const share = percent >= 100 ? '' : `numgen random mod 100 < ${Math.round(percent)} `;
      const lossRules = (match: string) =>
        `table inet ${lossTable} {\n chain out {\n  type filter hook output priority 0;\n  ${match}meta l4proto udp ${share}counter drop\n }\n}\n`;
      // Guest to host: everything the namespace sends leaves through its veth.
      nftScript(ns, lossRules(''));
      // Host to guest: only what the root namespace sends out of this veth (the host's browser, the server).
      nftScript(null, lossRules(`oifname "${hostDev}" `));
    },
    chromiumWrapper() {
      return network.wrapperFor('/usr/bin/chromium');
    },
    wrapperFor(binary) {
      const wrapper = path.join(os.tmpdir(), `${ns}-${path.basename(binary).replace(/[^\w.-]/g, '_')}.sh`);
      fs.writeFileSync(wrapper, `#!/bin/sh\n# ${binary} inside network namespace ${ns} (test/helpers/netns.ts)\nexec ${which('ip')} netns exec ${ns} ${binary} "$@"\n`, { mode: 0o755 });
      wrappers.add(wrapper);
      return wrapper;
    },
    async forwardLoopback(port) {
      const socket = path.join(os.tmpdir(), `${ns}-loopback-${port}.sock`);
      quietly(() => fs.rmSync(socket, { force: true }));
      // Inside the namespace: the Unix socket to 127.0.0.1:port there.
      const inside = `const net = require('node:net'); const [socket, port] = process.argv.slice(1);
net.createServer((c) => { const u = net.connect(Number(port), '127.0.0.1'); c.pipe(u).pipe(c); c.on('error', () => u.destroy()); u.on('error', () => c.destroy()); })
  .listen(socket, () => process.stdout.write('listening\\n'));`;
      const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', inside, socket, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
      // The root namespace's end: 127.0.0.1:port to the Unix socket.
      const server = net.createServer((c) => {
        const u = net.connect(socket);
        c.pipe(u).pipe(c);
        c.on('error', () => u.destroy());
        u.on('error', () => c.destroy());
      });
      forwarders.push({ server, child, socket });
      await new Promise<void>((resolve, reject) => {
        child.once('error', reject);
        child.once('exit', (code) => reject(new Error(`the loopback forwarder in ${ns} exited (${code})`)));
        child.stdout!.once('data', () => resolve());
      });
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
    },
    destroy() {
      live.delete(network);
      for (const { server, child, socket } of forwarders.splice(0)) {
        quietly(() => server.close());
        quietly(() => child.kill('SIGKILL'));
        quietly(() => fs.rmSync(socket, { force: true }));
      }
      removeNetwork(ns, hostDev, lossTable);
      for (const wrapper of wrappers) quietly(() => fs.rmSync(wrapper, { force: true }));
      wrappers.clear();
    },
  };

  live.add(network);
  try {
    run('ip', 'netns', 'add', ns);
    run('ip', 'link', 'add', hostDev, 'type', 'veth', 'peer', 'name', guestDev);
    run('ip', 'link', 'set', guestDev, 'netns', ns);
    // IPv4 only, as a phone's network and a server are: with IPv6 on, both ends get a
    // link-local address that no address change touches, and a path over it would
    // carry the media through the changes the tests make.
    fs.writeFileSync(`/proc/sys/net/ipv6/conf/${hostDev}/disable_ipv6`, '1');
    inNs(ns, 'sh', '-c', `echo 1 > /proc/sys/net/ipv6/conf/${guestDev}/disable_ipv6`);
    run('ip', 'addr', 'add', `${hostAddress}/24`, 'dev', hostDev);
    run('ip', 'link', 'set', hostDev, 'up');
    inNs(ns, 'ip', 'link', 'set', 'lo', 'up');
    inNs(ns, 'ip', 'addr', 'add', `${guest()}/24`, 'dev', guestDev);
    inNs(ns, 'ip', 'link', 'set', guestDev, 'up');
    route();
  } catch (error) {
    network.destroy();
    throw error;
  }
  return network;
}

/** Loads an nft script, in namespace `ns` or (null) in the root namespace. */
function nftScript(ns: string | null, script: string): void {
  const nft = which('nft') ?? 'nft';
  const args = ns ? ['netns', 'exec', ns, nft, '-f', '-'] : ['-f', '-'];
  try {
    execFileSync(ns ? (which('ip') ?? 'ip') : nft, args, { input: script, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
  } catch (error) {
    throw new Error(`nft ${ns ? `(in ${ns}) ` : ''}failed on "${script}": ${String((error as { stderr?: unknown }).stderr ?? '').trim()}`);
  }
}

/** Removes one network step by step, each step on its own (any may already be gone). */
function removeNetwork(ns: string, hostDev: string | null, lossTable: string | null): void {
  // Processes still inside (a Chromium the test could not close) would keep the namespace alive after its name goes.
  quietly(() => {
    for (const pid of run('ip', 'netns', 'pids', ns).split(/\s+/).filter(Boolean)) quietly(() => process.kill(Number(pid), 'SIGKILL'));
  });
  // Deleting one end of a veth deletes both; the namespace alone would free its end only when the kernel gets to it.
  if (hostDev) quietly(() => run('ip', 'link', 'del', hostDev));
  if (lossTable) quietly(() => run('nft', 'delete', 'table', 'inet', lossTable));
  quietly(() => run('ip', 'netns', 'del', ns));
}

/** Removes what runs that are gone left behind: namespaces, host-side links and nft tables named after a dead pid. */
export function cleanupStale(): void {
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  };
  const stale = (pid: string | undefined) => pid !== undefined && Number(pid) !== process.pid && !alive(Number(pid));
  quietly(() => {
    for (const line of run('ip', 'netns', 'list').split('\n')) {
      const m = /^(prl-(\d+)-\d+)\b/.exec(line);
      if (m && stale(m[2])) removeNetwork(m[1]!, null, null);
    }
  });
  quietly(() => {
    for (const m of run('ip', '-o', 'link', 'show').matchAll(/^\d+: (prl(\d+)h\d+)[@:]/gm)) {
      if (stale(m[2])) quietly(() => run('ip', 'link', 'del', m[1]!));
    }
  });
  quietly(() => {
    for (const m of run('nft', 'list', 'tables').matchAll(/^table inet (prl_loss_(\d+)_\d+)$/gm)) {
      if (stale(m[2])) quietly(() => run('nft', 'delete', 'table', 'inet', m[1]!));
    }
  });
  quietly(() => {
    for (const file of fs.readdirSync(os.tmpdir())) {
      const m = /^prl-(\d+)-\d+-.+\.(sh|sock)$/.exec(file);
      if (m && stale(m[1])) fs.rmSync(path.join(os.tmpdir(), file), { force: true });
    }
  });
}

// The safety net: a test that forgot destroy(), or a worker that exits on an
// error, still leaves nothing behind. (A SIGKILL leaves it to cleanupStale.)
function destroyAll() {
  for (const network of [...live]) network.destroy();
}
process.on('exit', destroyAll);
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    destroyAll();
    // Then die of the signal as if nobody had listened.
    process.kill(process.pid, signal);
  });
}

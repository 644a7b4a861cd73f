// Throwaway coturn TURN server for relay tests (Debian's coturn): loopback
// only, the REST shared-secret scheme (use-auth-secret), loopback peers
// allowed (they are refused by default), no TLS, no CLI, a small port range.
//
//   const turn = await startCoturn({ secret });
//   ... turn.url (turn:127.0.0.1:PORT?transport=udp) ...
//   await turn.stop();
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { freePort } from './postgres.mjs';

export function findTurnserver() {
  for (const candidate of ['/usr/bin/turnserver', '/usr/local/bin/turnserver']) if (existsSync(candidate)) return candidate;
  return null;
}

/**
 * `address`: where coturn listens and relays (127.0.0.1, or a veth address a network namespace reaches).
 * `port`: a port to listen on (a TURN server started again where the pages know it), else a free one.
 */
export async function startCoturn({ secret, realm = 'parley.test', address = '127.0.0.1', port: wanted = undefined }) {
  const binary = findTurnserver();
  if (!binary) throw new Error('No turnserver found: install it with `apt-get install coturn` (.ci/run does).');
  const port = wanted ?? (await freePort());
  const minPort = 40000 + Math.floor(Math.random() * 20000);
  const child = spawn(
    binary,
    [
      '-n', // no configuration file
      `--listening-ip=${address}`,
      `--listening-port=${port}`,
      `--relay-ip=${address}`,
      `--min-port=${minPort}`,
      `--max-port=${minPort + 200}`,
      '--use-auth-secret',
      `--static-auth-secret=${secret}`,
      `--realm=${realm}`,
      '--allow-loopback-peers',
      '--no-cli',
      '--no-tls',
      '--no-dtls',
      '--fingerprint',
      '--log-file=stdout',
      '--simple-log',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const killNow = () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  };
  process.on('exit', killNow);
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`turnserver exited (${child.exitCode}): ${output.slice(-2000)}`);
    // coturn logs its listeners once it has opened them.
    if (/Total General servers|IPv4\. UDP listener opened/i.test(output) && i > 2) break;
    if (i > 100) {
      killNow();
      throw new Error(`turnserver did not start within 5 s: ${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `turn:${address}:${port}?transport=udp`,
    port,
    output: () => output,
    async stop() {
      process.off('exit', killNow);
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 3000))]);
        killNow();
      }
    },
  };
}

// Parley nodes as real processes (node dist/src/main.js), so that a test can
// kill one with SIGKILL like a machine that dies.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

export interface NodeProcess {
  port: number;
  url: string;
  child: ChildProcess;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function startNode(port: number, env: Record<string, string>, readyTimeoutMs = 20_000): Promise<NodeProcess> {
  if (!fs.existsSync('dist/src/main.js')) throw new Error('dist/ is missing: run `npm run build` first (npm test does)');
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`node on port ${port} exited (${child.exitCode}): ${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`node on port ${port} not ready within ${readyTimeoutMs / 1000} s: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    url,
    child,
    output: () => output,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill(signal);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    },
  };
}

// `parley start`: the server with the Node flags it runs with (node-flags.ts).
// V8 takes them only as a process starts, so a `parley` process started
// without them starts the server as a child process of its own, hands it the
// terminal, passes on SIGTERM and SIGINT, and exits as it does.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../config.js';
import { missingServerFlags, serverNodeFlags } from '../node-flags.js';

const MAIN = fileURLToPath(new URL('../main.js', import.meta.url));

export async function startCommand(): Promise<void> {
  // The server module starts on import and owns the process from then on (signals, exit).
  const wanted = wantedFlags();
  if (!missingServerFlags(wanted).length) {
    await import('../main.js');
    return;
  }
  const server = spawn(process.execPath, [...wanted, MAIN], { stdio: 'inherit' });
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => server.kill(signal));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
    server.once('exit', (...end) => resolve(end));
    server.once('error', reject);
  });
  process.exitCode = code ?? (signal ? 1 : 0);
}

/** The flags the server needs where its calls run; none for a configuration the server will refuse (it says why as it starts). */
function wantedFlags(): readonly string[] {
  try {
    return serverNodeFlags(loadConfig().callsProcess);
  } catch {
    return [];
  }
}

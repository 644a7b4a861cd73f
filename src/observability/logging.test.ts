// http/logging.ts writes the request line itself, without pino: it must be the
// line pino would have written for the same record, and obey the level.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { childLoggerOnFirstUse, createLogging } from './logging.js';

function capture() {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => void lines.push(line) } };
}

describe('the request line', () => {
  it('is the line pino writes for the same record, field for field and in the same order', () => {
    const { lines, stream } = capture();
    const logging = createLogging('info', stream);
    logging.requestLine('req-7', 'GET', '/api/rooms/:token', 200, 3);
    logging.logger.child({ reqId: 'req-7' }).info({ method: 'GET', route: '/api/rooms/:token', status: 200, ms: 3 }, 'request');
    expect(lines).toHaveLength(2);
    const [ours, pinos] = lines.map((line) => {
      expect(line.endsWith('\n')).toBe(true);
      const { time, ...rest } = JSON.parse(line) as Record<string, unknown>;
      expect(typeof time).toBe('number');
      return rest;
    });
    expect(Object.entries(ours!)).toEqual(Object.entries(pinos!));
  });

  it('escapes what it quotes, and is not written below level info', () => {
    const { lines, stream } = capture();
    createLogging('info', stream).requestLine('req-"1"', 'GET', '(no route)', 404, 0);
    expect(JSON.parse(lines[0]!)).toMatchObject({ reqId: 'req-"1"', route: '(no route)', status: 404 });
    createLogging('warn', stream).requestLine('req-2', 'GET', '/healthz', 200, 1);
    expect(lines).toHaveLength(1);
  });
});

describe("a request's logger", () => {
  it('is made on first use, once, with the request id and the redaction of every line', () => {
    const { lines, stream } = capture();
    const logging = createLogging('info', stream);
    let made = 0;
    const child = logging.logger.child.bind(logging.logger);
    logging.logger.child = (...args: Parameters<typeof child>) => (made++, child(...args));

    const requestLogger = childLoggerOnFirstUse(logging.logger, { reqId: 'req-9' }, {});
    expect(requestLogger.level).toBe('info');
    expect(made).toBe(0);

    requestLogger.warn({ authorization: 'Bearer secret-token' }, 'first');
    requestLogger.error('second');
    expect(made).toBe(1);
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ level: 40, reqId: 'req-9', authorization: '[redacted]', msg: 'first' }),
      expect.objectContaining({ level: 50, reqId: 'req-9', msg: 'second' }),
    ]);
    expect(lines.join('')).not.toContain('secret-token');
  });
});

// Each test starts a node of its own through tsx: seconds on a loaded machine, so 180 s a test and
// 120 s a process, limits only a hung process reaches.
describe('stdout', { timeout: 180_000 }, () => {
  /** Runs `body` in a node of its own with createLogging('info') as `logging`; its stdout, and how it ended. */
  function run(body: string): { stdout: string; signal: NodeJS.Signals | null } {
    const module = JSON.stringify(fileURLToPath(new URL('./logging.ts', import.meta.url)));
    const script = `import { createLogging } from ${module}; const logging = createLogging('info'); ${body}`;
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 120_000 });
    return { stdout: result.stdout, signal: result.signal };
  }
  const ids = (stdout: string) => stdout.trim().split('\n').map((line) => (JSON.parse(line) as { reqId: string }).reqId);

  it('gets every line in order: a full batch at once, the rest 50 ms after its first line', () => {
    // 300 lines of about 140 characters: five full batches of 8 KiB, and a rest that only the timer writes.
    const { stdout, signal } = run(`
      for (let i = 0; i < 300; i++) logging.requestLine('req-' + i, 'GET', '/healthz', 200, 0);
      setTimeout(() => process.kill(process.pid, 'SIGKILL'), 300);`);
    expect(signal).toBe('SIGKILL'); // no exit handler ran: the timer wrote the rest
    expect(ids(stdout)).toEqual(Array.from({ length: 300 }, (_, i) => `req-${i}`));
  });

  it('gets the lines not yet written when the process exits', () => {
    const { stdout } = run(`
      logging.requestLine('req-a', 'GET', '/healthz', 200, 0);
      logging.logger.info('stopping');
      process.exit(0);`);
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as { reqId?: string; msg: string });
    expect(lines.map((line) => line.reqId ?? line.msg)).toEqual(['req-a', 'stopping']);
  });
});

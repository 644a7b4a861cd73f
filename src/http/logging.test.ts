// http/logging.ts writes the request line itself, without pino: it must be the
// line pino would have written for the same record, and obey the level.
import { describe, expect, it } from 'vitest';
import { createLogging } from './logging.js';

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

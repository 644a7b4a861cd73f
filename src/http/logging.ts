// pino options: secrets never reach a log line. Authorization and cookies are
// redacted wherever they appear; request lines carry route patterns, not URLs.
import type { FastifyServerOptions } from 'fastify';
import pino from 'pino';
import { errorForLog } from './log-errors.js';

const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'token',
  '*.token',
  'access_token',
  '*.access_token',
  'guest_token',
  '*.guest_token',
];

export function loggerOptions(level: string, stream?: NodeJS.WritableStream): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    // Database errors quote parameter values (tokens among them): logged without their text (log-errors.ts).
    serializers: { err: errorForLog },
    stream: stream ?? stdoutLines(),
  };
}

let stdout: { write(line: string): void } | undefined;

/**
 * stdout, one write per turn of the event loop: the lines of every answer given
 * in that turn go out together, synchronously, right after it. A blocking write
 * per line (pino's default) or one handed to the thread pool (sync: false) was
 * a measurable part of every request (bench/README.md). Nothing waits for a
 * timer, and what a turn leaves when the process exits is written then.
 * One per process: every app built in it shares the descriptor.
 */
function stdoutLines() {
  if (stdout) return stdout;
  const destination = pino.destination({ dest: 1, sync: true, minLength: 8 * 1024 });
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    destination.flush(); // synchronous here (flushSync would also fsync)
  };
  process.once('exit', () => {
    if (scheduled) flush();
  });
  stdout = {
    write(line: string) {
      destination.write(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
  };
  return stdout;
}

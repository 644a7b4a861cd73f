// The server's log: secrets never reach a line. Authorization and cookies are
// redacted wherever they appear; request lines carry route patterns, not URLs.
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
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

export interface Logging {
  /** For Fastify (loggerInstance) and everything that logs through it. */
  logger: FastifyBaseLogger;
  /** The line every answer leaves, at level info. */
  requestLine(reqId: string, method: string, route: string, status: number, ms: number): void;
}

/** `stream`: where lines go; stdout in batches (below) by default. */
export function createLogging(level: string, stream: { write(line: string): void } = stdoutLines()): Logging {
  const logger = pino(
    {
      level,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      // Database errors quote parameter values (tokens among them): logged without their text (log-errors.ts).
      serializers: { err: errorForLog },
    },
    stream,
  );
  const identity = `,"pid":${process.pid},"hostname":${JSON.stringify(os.hostname())},"reqId":`;
  return {
    logger,
    // Written as pino would write it, field for field, without pino: its serialization and
    // redaction were a few percent of a GET's CPU (bench/README.md). None of these fields
    // can hold a secret: Fastify's request id, the method Node's parser accepted, our own
    // route pattern and two numbers.
    requestLine(reqId, method, route, status, ms) {
      if (!logger.isLevelEnabled('info')) return;
      stream.write(
        `{"level":30,"time":${Date.now()}${identity}${JSON.stringify(reqId)},"method":${JSON.stringify(method)},` +
          `"route":${JSON.stringify(route)},"status":${status},"ms":${ms},"msg":"request"}\n`,
      );
    },
  };
}

let stdout: { write(line: string): void } | undefined;

/** How long a line may wait in the buffer before it is written. */
const FLUSH_AFTER_MS = 50;

/**
 * stdout, written in batches: lines gather in a buffer, which goes out in one
 * synchronous write when it holds 8 KiB or 50 ms after its first line, and
 * when the process exits. A blocking write per line (pino's default), one
 * handed to the thread pool (sync: false) or even one per turn of the event
 * loop was a measurable part of every request (bench/README.md). A process
 * killed outright (SIGKILL) loses at most the last 50 ms of lines.
 * One per process: every app built in it shares the descriptor.
 */
function stdoutLines() {
  if (stdout) return stdout;
  const destination = pino.destination({ dest: 1, sync: true, minLength: 8 * 1024 });
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    destination.flush(); // synchronous here (flushSync would also fsync)
  };
  process.once('exit', () => {
    if (timer) flush();
  });
  stdout = {
    write(line: string) {
      destination.write(line);
      // A timer that does not keep the process alive: the exit handler writes what is left.
      timer ??= setTimeout(flush, FLUSH_AFTER_MS).unref();
    },
  };
  return stdout;
}

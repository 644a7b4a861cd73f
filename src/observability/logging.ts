// The server's log: secrets never reach a line. Authorization and cookies are
// redacted wherever they appear; request lines carry route patterns, not URLs.
import os from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import type { Bindings, ChildLoggerOptions } from 'pino';
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

const LOG_METHODS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
type LogMethod = (typeof LOG_METHODS)[number];

/**
 * A request's logger, made when the request first logs. Fastify gives every
 * request a child logger, and pino's child redacts its bindings as it is made:
 * about 1.5 KB of garbage per request (bench/README.md), for a logger that
 * few requests use (an error, the API gate's warning).
 */
class ChildOnFirstUse {
  #made: FastifyBaseLogger | undefined;
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  get #logger(): FastifyBaseLogger {
    return (this.#made ??= this.#parent.child(this.#bindings, this.#options));
  }

  // fatal(...), error(...), ... info(...), silent(...): each makes the logger and passes its arguments on.
  static {
    for (const method of LOG_METHODS) {
      Object.defineProperty(ChildOnFirstUse.prototype, method, {
        value(this: ChildOnFirstUse, ...args: unknown[]) {
          (this.#logger as unknown as Record<LogMethod, (...args: unknown[]) => void>)[method](...args);
        },
      });
    }
  }

  get level(): string {
    return this.#made?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#logger.level = level;
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: each request's logger is made on first use. */
export function childLoggerOnFirstUse(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new ChildOnFirstUse(logger, bindings, options) as unknown as FastifyBaseLogger;
}

let stdout: { write(line: string): void } | undefined;

/** How long a line may wait in the batch before it is written. */
const FLUSH_AFTER_MS = 50;
/** The batch goes out when it holds this many characters. */
const BATCH_CHARACTERS = 8 * 1024;

/**
 * stdout, written in batches: lines gather, and go out in one synchronous
 * write when they hold 8 KiB or 50 ms after the first, and when the process
 * exits. A blocking write per line (pino's default), one handed to the thread
 * pool (sync: false) or even one per turn of the event loop was a measurable
 * part of every request (bench/README.md). A process killed outright
 * (SIGKILL) loses at most the last 50 ms of lines.
 *
 * The batch is an array joined once per write, not sonic-boom's `minLength`
 * buffer: that one grows a single string and measures its bytes on every
 * line, which copies the whole buffer each time (about 4 KB of garbage per
 * request, bench/README.md); sonic-boom still does the write, and waits out a
 * full pipe.
 * One per process: every app built in it shares the descriptor.
 */
function stdoutLines() {
  if (stdout) return stdout;
  const destination = pino.destination({ dest: 1, sync: true });
  let batch: string[] = [];
  let characters = 0;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (batch.length === 0) return;
    const text = batch.join('');
    batch = [];
    characters = 0;
    destination.write(text);
  };
  process.once('exit', flush);
  stdout = {
    write(line: string) {
      batch.push(line);
      characters += line.length;
      if (characters >= BATCH_CHARACTERS) flush();
      // A timer that does not keep the process alive: the exit handler writes what is left.
      else timer ??= setTimeout(flush, FLUSH_AFTER_MS).unref();
    },
  };
  return stdout;
}

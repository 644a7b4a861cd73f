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
    // stdout written asynchronously: pino's default is one blocking write per
    // line, which cost a request line ~6% of the server's CPU (bench/README.md).
    // Lines still go out as soon as the previous write is done (no minimum
    // buffer), and pino flushes what is left synchronously when the process exits.
    stream: stream ?? pino.destination({ dest: 1, sync: false }),
  };
}

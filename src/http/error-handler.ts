// The one place where errors become HTTP responses in the interface's shapes
// (docs/design.md#errors-and-limits): 400 an array of {attribute, type, message}; 401/403/404/422 {error}.
// Nothing else escapes: no stack, no driver message, no 5xx detail.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import {
  ConflictError,
  FeatureDisabledError,
  ForbiddenError,
  NotFoundError,
  PreconditionFailedError,
  UnauthorizedError,
  UnprocessableError,
  ValidationError,
  type FieldError,
} from '../errors.js';
import { toFieldErrors } from './validation.js';

/** Connection-level failures of the database: the service is unavailable, not broken. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string };
  if (typeof e?.code === 'string' && (/^(08|57P0|53300)/.test(e.code) || ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE'].includes(e.code))) {
    return true;
  }
  return /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|Client has encountered a connection error/i.test(
    e?.message ?? '',
  );
}

function fieldErrorsOf(error: FastifyError): FieldError[] | null {
  if (error.validation) return toFieldErrors(error.validation as never, error.validationContext ?? 'body');
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return [{ attribute: 'body', type: 'invalid', message: 'is not valid JSON' }];
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return [{ attribute: 'body', type: 'blank', message: "can't be blank" }];
    default:
      return /^Unexpected token|JSON/.test(error.message) && error.statusCode === 400
        ? [{ attribute: 'body', type: 'invalid', message: 'is not valid JSON' }]
        : null;
  }
}

/** 503 with Retry-After: the database did not answer in time, or the API gate did not start the request in time. */
export function serviceUnavailable(reply: FastifyReply) {
  return reply.status(503).header('Retry-After', '1').send({ error: 'Service temporarily unavailable, try again shortly' });
}

export function errorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ValidationError) return reply.status(400).send(error.errors);
  const fieldErrors = fieldErrorsOf(error);
  if (fieldErrors) return reply.status(400).send(fieldErrors);
  if (error instanceof UnauthorizedError) {
    return reply.status(401).header('WWW-Authenticate', 'Bearer').send({ error: error.message });
  }
  if (error instanceof ForbiddenError) return reply.status(403).send({ error: error.message });
  if (error instanceof NotFoundError) return reply.status(404).send({ error: error.message });
  if (error instanceof FeatureDisabledError) return reply.status(422).send({ error: error.message });
  if (error instanceof ConflictError) return reply.status(409).send({ error: error.message });
  if (error instanceof PreconditionFailedError) return reply.status(412).send({ error: error.message });
  if (error instanceof UnprocessableError) return reply.status(422).send({ error: error.message });
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ code: (error as { code?: string }).code }, 'database unavailable');
    return serviceUnavailable(reply);
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    // Fastify's own client errors (413 body too large, 415 media type, ...).
    return reply.status(status).send({ error: error.message });
  }
  request.log.error({ err: error }, 'unexpected error');
  return reply.status(500).send({ error: 'Internal server error' });
}

/**
 * Errors the router raises before any route runs, in the interface's {error}
 * shape (Fastify's own body would echo the URL, tokens included).
 */
export function frameworkErrorHandler(error: FastifyError, _request: FastifyRequest, reply: FastifyReply) {
  // A path segment longer than any token we issue names nothing: an unknown room.
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return reply.status(404).send({ error: 'Not found' });
  // A 400 is always the array of validation objects, even for a URL the router cannot decode.
  if (error.code === 'FST_ERR_BAD_URL') return reply.status(400).send([{ attribute: 'url', type: 'invalid', message: 'has invalid percent-encoding' }]);
  return reply.status(400).send([{ attribute: 'request', type: 'invalid', message: 'is not a valid request' }]);
}

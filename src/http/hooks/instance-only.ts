// Endpoints for Instance API tokens only (room feedback, webhook endpoints):
// an Organization token gets 403 before its query or body is checked, as a
// missing token gets 401 before them (docs/api.md "Errors").
import type { preValidationAsyncHookHandler } from 'fastify';
import { ForbiddenError } from '../../errors.js';

export function instanceTokensOnly(message: string): preValidationAsyncHookHandler {
  return async (request) => {
    if (request.principal.kind !== 'instance') throw new ForbiddenError(message);
  };
}

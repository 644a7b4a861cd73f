// Domain errors. No HTTP here: src/http/error-handler.ts maps each one to the
// interface's status and body shape (docs/design.md#errors-and-limits).

export interface FieldError {
  attribute: string;
  /** Rails' vocabulary: blank, invalid, not_a_number, greater_than_or_equal_to, too_long, ... */
  type: string;
  message: string;
}

export class ValidationError extends Error {
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.attribute} ${e.message}`).join('; '));
    this.name = 'ValidationError';
  }
  static of(attribute: string, type: string, message: string): ValidationError {
    return new ValidationError([{ attribute, type, message }]);
  }
}

/** Unknown, or outside the caller's scope: the two are indistinguishable on purpose (docs/design.md#tenants-tokens-and-authentication). */
export class NotFoundError extends Error {
  constructor(what = 'Not found') {
    super(what);
    this.name = 'NotFoundError';
  }
}

export class ForbiddenError extends Error {
  constructor(message = 'This token is not allowed to call this endpoint') {
    super(message);
    this.name = 'ForbiddenError';
  }
}

export class UnauthorizedError extends Error {
  constructor(message = 'Missing or invalid API token') {
    super(message);
    this.name = 'UnauthorizedError';
  }
}

/** A request that needs a feature toggle that is off (422 {error}). */
export class FeatureDisabledError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureDisabledError';
  }
}

/** The room is closed: nobody may join it any more. */
export class RoomClosedError extends Error {
  constructor() {
    super('This room is closed');
    this.name = 'RoomClosedError';
  }
}

/** A conditional request (If-Match) whose condition does not hold: the room changed since it was read. */
export class PreconditionFailedError extends Error {
  constructor(message = 'The room has changed since you read it (If-Match does not match its ETag): fetch it again and retry') {
    super(message);
    this.name = 'PreconditionFailedError';
  }
}

/** The request is well formed but cannot be carried out (422 {error}), e.g. an Idempotency-Key reused for another body. */
export class UnprocessableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnprocessableError';
  }
}

/** The request conflicts with the current state of what it names (409 {error}). */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}

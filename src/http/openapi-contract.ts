// What the route schemas cannot say by themselves, added to the generated
// OpenAPI document so that an integrator can generate a client from it
// (docs/api.md "A typed client"): the headers each answer really carries, the
// statuses that hooks and the error handler give rather than the route (401,
// 429, 503, 413, 415), the request headers read by hand (If-Match,
// Idempotency-Key), descriptions and examples. test/api/openapi.test.ts lints
// the result with Redocly and checks that every documented header is really sent.
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface ContractOptions {
  /** Whether /api answers carry the RateLimit-* headers (RATE_LIMIT_PER_MINUTE > 0). */
  rateLimited: boolean;
  /** Whether the admin routes are registered (PARLEY_ADMIN_TOKEN set): without them the admin scheme would be unused. */
  admin: boolean;
}

const integer = (description: string, example: number) => ({ description, schema: { type: 'integer', minimum: 0 }, example });
const text = (description: string, example: string) => ({ description, schema: { type: 'string' }, example });

/** components/headers: each header once, referenced from the answers that send it. */
const HEADERS: Json = {
  'Current-Page': integer('The page this answer holds, from 1.', 1),
  'Page-Limit': integer('Items per page.', 20),
  'Total-Pages': integer('Pages in the whole list.', 3),
  'Total-Count': integer('Items in the whole list.', 42),
  Link: text(
    'RFC 8288 links with absolute URLs (first, prev, next, last) that keep the query and carry the keyset cursor; follow them.',
    '<https://parley.example/api/rooms?page=2&cursor=eyJr>; rel="next", <https://parley.example/api/rooms?page=3>; rel="last"',
  ),
  Location: text('The absolute URL of what was created.', 'https://parley.example/api/rooms/Xy7rT2pQ9sVbN4mK8wZc1A'),
  ETag: text("The room's version, for If-Match on PUT, DELETE and close.", '"3"'),
  'Idempotent-Replayed': text('true when this is the stored answer to an earlier create with the same Idempotency-Key.', 'true'),
  'RateLimit-Limit': integer('Requests this API token may make per minute on this node.', 600),
  'RateLimit-Remaining': integer('Requests left in the current burst.', 599),
  'RateLimit-Reset': integer('Seconds until the whole burst is available again.', 1),
  'Retry-After': integer('Seconds to wait before trying again.', 1),
  'WWW-Authenticate': text('The scheme to authenticate with.', 'Bearer'),
  'Accept-Ranges': text('A recording file is served by byte ranges too (Range: bytes=a-b).', 'bytes'),
  'Content-Range': text('The bytes sent of the whole file; on 416, `bytes */size`.', 'bytes 0-1048575/183500800'),
  'Content-Disposition': text('A recording file downloads under its id.', 'attachment; filename="recording-6f1d0c2a-3b4e-4f5a-8b9c-0d1e2f3a4b5c.webm"'),
  // hooks/security-headers.ts: rooms carry host tokens, which no cache may keep.
  'Cache-Control': text('Always no-store: answers carry tokens and join URLs.', 'no-store'),
};

const ref = (name: string) => ({ $ref: `#/components/headers/${name}` });
const PAGINATION = ['Current-Page', 'Page-Limit', 'Total-Pages', 'Total-Count', 'Link'];
const RATE_LIMIT = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'];

/** Headers on the success answer of an operation, by operationId (the routes that set them). */
const SUCCESS_HEADERS: Record<string, string[]> = {
  listRooms: PAGINATION,
  listRoomFeedbacks: PAGINATION,
  createRoom: ['Location', 'ETag', 'Idempotent-Replayed'],
  getRoom: ['ETag'],
  updateRoom: ['ETag'],
  createWebhookEndpoint: ['Location'],
};

/** Headers of one status of an operation only (a recording's download: a whole file, a range, a range past the end). */
const STATUS_HEADERS: Record<string, Record<string, string[]>> = {
  downloadRecording: { '200': ['Accept-Ranges', 'Content-Disposition'], '206': ['Accept-Ranges', 'Content-Range', 'Content-Disposition'], '416': ['Accept-Ranges', 'Content-Range'] },
};

const IF_MATCH = {
  name: 'If-Match',
  in: 'header',
  required: false,
  description: 'Act only if the room is still at this version (its ETag); 412 otherwise. `*` or absent: any version.',
  schema: { type: 'string', maxLength: 1024 },
  example: '"3"',
};
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'A key of 1..255 visible ASCII characters: a retry with the same key and body gets the first answer, not a second room.',
  schema: { type: 'string', maxLength: 257 },
  example: 'booking-4711-attempt',
};
const REQUEST_HEADERS: Record<string, Json[]> = {
  createRoom: [IDEMPOTENCY_KEY],
  updateRoom: [IF_MATCH],
  deleteRoom: [IF_MATCH],
  closeRoom: [IF_MATCH],
  closeRoomWithPut: [IF_MATCH],
  closeRoomWithPatch: [IF_MATCH],
};

const DESCRIPTIONS: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '204': 'Done; no body',
  '206': 'Partial content: the byte range asked for',
  '400': 'Invalid request: every failing field at once (also a bad If-Match or Idempotency-Key header, or a URL with broken percent-encoding)',
  '401': 'No, bad or revoked token',
  '403': 'Needs an Instance token',
  '404': 'Not found, or out of the token’s scope',
  '409': 'A create with this Idempotency-Key is still in progress, or the room it made has since been deleted; a recording not ready, or still recording',
  '412': 'If-Match names another version of the room',
  '413': 'Body over 64 KiB',
  '415': 'Body that is not JSON',
  '416': 'The byte range is outside the file',
  '422': 'A feature that is off, an Idempotency-Key reused with another body, or a limit reached',
  '429': 'Over RATE_LIMIT_PER_MINUTE for this token',
  '503': 'The database is unreachable; retry',
};

const ERROR_EXAMPLES: Record<string, string> = {
  '401': 'Missing or invalid API token',
  '403': 'Webhook endpoints need an Instance token',
  '404': 'Room not found',
  '409': 'A create with this Idempotency-Key is in progress',
  '412': 'The room has changed since (If-Match)',
  '413': 'Request body is too large',
  '415': 'Unsupported Media Type: text/plain',
  '422': 'The permanent_rooms feature is disabled',
  '429': 'Too many requests for this API token (limit 600 per minute); retry after 1 s',
  '503': 'Service temporarily unavailable, try again shortly',
};

const errorBody = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] };
const errorResponse = (status: string) => ({
  description: DESCRIPTIONS[status],
  content: { 'application/json': { schema: errorBody } },
});

const VALIDATION_EXAMPLE = [{ attribute: 'meeting_duration', type: 'greater_than_or_equal_to', message: 'must be greater than or equal to 1' }];
const VALIDATION_ERRORS = {
  type: 'array',
  description: 'Every failing field at once.',
  items: {
    type: 'object',
    properties: { attribute: { type: 'string' }, type: { type: 'string' }, message: { type: 'string' } },
    required: ['attribute', 'type', 'message'],
  },
};

function addHeaders(response: Json, names: string[]) {
  response.headers = { ...response.headers, ...Object.fromEntries(names.map((name) => [name, ref(name)])) };
}

function completeOperation(path: string, operation: Json, options: ContractOptions) {
  const api = path.startsWith('/api/');
  const responses: Json = operation.responses;
  // Hooks and the error handler answer these on any operation, whatever its route declares.
  responses['400'] ??= { description: '', content: { 'application/json': { schema: VALIDATION_ERRORS } } };
  responses['401'] ??= errorResponse('401');
  if (operation.requestBody) {
    responses['413'] ??= errorResponse('413');
    responses['415'] ??= errorResponse('415');
  }
  if (api && options.rateLimited) responses['429'] ??= errorResponse('429');
  responses['503'] ??= errorResponse('503');

  for (const [status, response] of Object.entries(responses) as [string, Json][]) {
    response.description = DESCRIPTIONS[status] ?? response.description;
    const media = response.content?.['application/json'];
    if (media && media.example === undefined) {
      if (status === '400') media.example = VALIDATION_EXAMPLE;
      else if (ERROR_EXAMPLES[status]) media.example = { error: ERROR_EXAMPLES[status] };
    }
    addHeaders(response, ['Cache-Control']);
    if (status === '401') addHeaders(response, ['WWW-Authenticate']);
    if (status === '429' || status === '503') addHeaders(response, ['Retry-After']);
    if (status.startsWith('2')) addHeaders(response, SUCCESS_HEADERS[operation.operationId] ?? []);
    addHeaders(response, STATUS_HEADERS[operation.operationId]?.[status] ?? []);
    // Every /api answer past authentication carries the limiter's headers, refusals included.
    if (api && options.rateLimited && status !== '401') addHeaders(response, RATE_LIMIT);
  }
  const extra = REQUEST_HEADERS[operation.operationId];
  if (extra) operation.parameters = [...(operation.parameters ?? []), ...extra];
}

/** The transformObject of @fastify/swagger: completes the generated document in place. */
export function completeOpenapiDocument(document: Json, options: ContractOptions): Json {
  document.info.license = { name: 'Proprietary: the operator of this Parley instance grants its use', url: `${document.servers?.[0]?.url ?? ''}/docs` };
  if (!options.admin) delete document.components.securitySchemes.admin;
  for (const [path, operations] of Object.entries(document.paths as Json)) {
    for (const operation of Object.values(operations as Json)) completeOperation(path, operation as Json, options);
  }
  // Only the headers some answer sends (without the rate limit, no RateLimit-* and no 429).
  const used = JSON.stringify(document.paths);
  document.components.headers = Object.fromEntries(Object.entries(HEADERS).filter(([name]) => used.includes(`"#/components/headers/${name}"`)));
  return document;
}

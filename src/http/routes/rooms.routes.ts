// The room endpoints (docs/api.md). Each handler is a few lines around the service.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { NotFoundError } from '../../errors.js';
import { TOKEN_PATTERN } from '../../domain/support/ids.js';
import type { Services } from '../../services.js';
import { etagOf, ifMatchVersions } from '../hooks/conditional.js';
import { idempotencyKey, roomRequestFingerprint } from '../hooks/idempotency.js';
import { pageRequest, setPageHeaders } from '../pagination.js';
import { ErrorSchema, PageQuerySchema, RoomInputSchema, TokenParamsSchema, ValidationErrorsSchema, commonErrors } from '../schemas.js';
import { presentRoom } from './rooms.presenter.js';

/** A token that cannot be one of ours is an unknown room, without a database lookup. */
function roomToken(token: string): string {
  if (!TOKEN_PATTERN.test(token)) throw new NotFoundError('Room not found');
  return token;
}

export const roomsRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    const { publicUrl } = services.config;
    const tags = ['rooms'];
    const security = [{ bearer: [] }];
    // 412: If-Match names another version of the room (docs/security.md).
    const conditionalErrors = { 412: ErrorSchema };

    app.get(
      '/api/rooms',
      {
        schema: {
          tags,
          security,
          operationId: 'listRooms',
          summary: 'List rooms',
          querystring: Type.Object(PageQuerySchema),
          response: { 200: Type.Object({ rooms: Type.Array(Type.Ref('Room')) }), 400: ValidationErrorsSchema, ...commonErrors },
        },
      },
      async (request, reply) => {
        const result = await services.rooms.list(request.principal, pageRequest(request.query));
        setPageHeaders(request, reply, publicUrl, result);
        return { rooms: result.rooms.map((view) => presentRoom(view, publicUrl)) };
      },
    );

    app.post(
      '/api/rooms',
      {
        schema: {
          tags,
          security,
          operationId: 'createRoom',
          summary: 'Create a room (send an Idempotency-Key to retry safely)',
          body: RoomInputSchema,
          response: { 201: Type.Ref('Room'), 400: ValidationErrorsSchema, 409: ErrorSchema, 422: ErrorSchema, ...commonErrors },
        },
      },
      async (request, reply) => {
        const key = idempotencyKey(request);
        const { view, replayed } =
          key === undefined
            ? { view: await services.rooms.create(request.principal, request.body), replayed: false }
            : await services.idempotency.createRoom(request.principal, key, roomRequestFingerprint(request.body), request.body);
        const room = presentRoom(view, publicUrl);
        if (replayed) reply.header('Idempotent-Replayed', 'true');
        return reply
          .status(201)
          .header('Location', `${publicUrl}/api/rooms/${room.token}`)
          .header('ETag', etagOf(view.row.version))
          .send(room);
      },
    );

    app.get(
      '/api/rooms/:token',
      {
        schema: { tags, security, operationId: 'getRoom', summary: 'Get a room', params: TokenParamsSchema, response: { 200: Type.Ref('Room'), ...commonErrors } },
      },
      async (request, reply) => {
        const view = await services.rooms.get(request.principal, roomToken(request.params.token));
        return reply.header('ETag', etagOf(view.row.version)).send(presentRoom(view, publicUrl));
      },
    );

    app.put(
      '/api/rooms/:token',
      {
        schema: {
          tags,
          security,
          operationId: 'updateRoom',
          summary: 'Update a room (send every value, changed or not)',
          params: TokenParamsSchema,
          body: RoomInputSchema,
          response: { 200: Type.Ref('Room'), 400: ValidationErrorsSchema, 422: ErrorSchema, ...conditionalErrors, ...commonErrors },
        },
      },
      async (request, reply) => {
        const token = roomToken(request.params.token);
        const view = await services.rooms.update(request.principal, token, request.body, ifMatchVersions(request));
        return reply.header('ETag', etagOf(view.row.version)).send(presentRoom(view, publicUrl));
      },
    );

    app.delete(
      '/api/rooms/:token',
      {
        schema: {
          tags,
          security,
          operationId: 'deleteRoom',
          summary: 'Delete a room permanently',
          params: TokenParamsSchema,
          response: { 204: Type.Null(), 400: ValidationErrorsSchema, ...conditionalErrors, ...commonErrors },
        },
      },
      async (request, reply) => {
        const token = roomToken(request.params.token);
        await services.rooms.delete(request.principal, token, ifMatchVersions(request));
        await services.recordings.sweepDeleted(); // its recordings' files (docs/design.md, "Recording with consent")
        return reply.status(204).send(null);
      },
    );

    // Close (docs/design.md#room-lifecycle): POST is the documented method; PUT and PATCH are accepted too.
    // One route per method, so each operation has its own operationId in the OpenAPI document.
    const closeOperations = [
      ['POST', 'closeRoom', 'Close a room: everyone is disconnected, joining is refused, the data is kept'],
      ['PUT', 'closeRoomWithPut', 'Close a room (as POST, for clients that can only PUT)'],
      ['PATCH', 'closeRoomWithPatch', 'Close a room (as POST, for clients that can only PATCH)'],
    ] as const;
    for (const [method, operationId, summary] of closeOperations) {
      app.route({
        method,
        url: '/api/rooms/:token/close',
        schema: {
          tags,
          security,
          operationId,
          summary,
          params: TokenParamsSchema,
          response: { 204: Type.Null(), 400: ValidationErrorsSchema, ...conditionalErrors, ...commonErrors },
        },
        handler: async (request, reply) => {
          const token = roomToken(request.params.token);
          await services.rooms.close(request.principal, token, ifMatchVersions(request));
          return reply.status(204).send(null);
        },
      });
    }

    // Participant sessions (docs/design.md, "Participant sessions"): kept after the room is deleted, as its feedback is.
    app.get(
      '/api/rooms/:token/sessions',
      {
        schema: {
          tags,
          security,
          operationId: 'listRoomSessions',
          summary: "Who was in the room's call, when, for how long, and how their network was (oldest first)",
          params: TokenParamsSchema,
          response: { 200: Type.Object({ sessions: Type.Array(Type.Ref('ParticipantSession')) }), ...commonErrors },
        },
      },
      async (request) => ({ sessions: await services.sessions.list(request.principal, roomToken(request.params.token)) }),
    );

  };

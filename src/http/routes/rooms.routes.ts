// §4.1-4.6: the room endpoints. Each handler is a few lines around the service.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { NotFoundError } from '../../errors.js';
import { TOKEN_PATTERN } from '../../domain/support/ids.js';
import type { Services } from '../../services.js';
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

    app.get(
      '/api/rooms',
      {
        schema: {
          tags,
          security,
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
          summary: 'Create a room',
          body: RoomInputSchema,
          response: { 201: Type.Ref('Room'), 400: ValidationErrorsSchema, 422: ErrorSchema, ...commonErrors },
        },
      },
      async (request, reply) => {
        const room = presentRoom(await services.rooms.create(request.principal, request.body), publicUrl);
        return reply.status(201).header('Location', `${publicUrl}/api/rooms/${room.token}`).send(room);
      },
    );

    app.get(
      '/api/rooms/:token',
      {
        schema: { tags, security, summary: 'Get a room', params: TokenParamsSchema, response: { 200: Type.Ref('Room'), ...commonErrors } },
      },
      async (request) => presentRoom(await services.rooms.get(request.principal, roomToken(request.params.token)), publicUrl),
    );

    app.put(
      '/api/rooms/:token',
      {
        schema: {
          tags,
          security,
          summary: 'Update a room (send every value, changed or not)',
          params: TokenParamsSchema,
          body: RoomInputSchema,
          response: { 200: Type.Ref('Room'), 400: ValidationErrorsSchema, 422: ErrorSchema, ...commonErrors },
        },
      },
      async (request) =>
        presentRoom(await services.rooms.update(request.principal, roomToken(request.params.token), request.body), publicUrl),
    );

    app.delete(
      '/api/rooms/:token',
      {
        schema: { tags, security, summary: 'Delete a room permanently', params: TokenParamsSchema, response: { 204: Type.Null(), ...commonErrors } },
      },
      async (request, reply) => {
        await services.rooms.delete(request.principal, roomToken(request.params.token));
        return reply.status(204).send(null);
      },
    );

    // Close (DESIGN §5): POST is the documented method; PUT and PATCH are accepted too.
    app.route({
      method: ['POST', 'PUT', 'PATCH'],
      url: '/api/rooms/:token/close',
      schema: {
        tags,
        security,
        summary: 'Close a room: everyone is disconnected, joining is refused, the data is kept',
        params: TokenParamsSchema,
        response: { 204: Type.Null(), ...commonErrors },
      },
      handler: async (request, reply) => {
        await services.rooms.close(request.principal, roomToken(request.params.token));
        return reply.status(204).send(null);
      },
    });

  };

// The signaling endpoint, GET /ws (WebSocket), served in this process
// (CALLS_PROCESS=inline, and the tests of the hub over real sockets). It checks
// the Origin and hands every socket to the node's hub (socket-endpoint.ts).
// Authentication happens inside the socket, with the join token in the first
// message: a token in the URL would end up in proxy logs. By default the
// upgrade goes to the calls process instead (src/calls-process/hand-off.ts).
import fastifyWebsocket from '@fastify/websocket';
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../services.js';
import type { Hub } from './hub.js';
import { refusedOrigin } from './origin-check.js';
import { createNodeHub, HARD_FRAME_LIMIT, serveSockets } from './socket-endpoint.js';

export interface RealtimeOptions {
  services: Services;
  /** Called with the hub once it exists (tests and readiness use it). */
  onHub?: (hub: Hub) => void;
}

export function realtimePlugin({ services, onHub }: RealtimeOptions): FastifyPluginAsync {
  return async (app) => {
    const { config } = services;
    const hub = createNodeHub(services, app.log);
    onHub?.(hub);
    let sockets: ReturnType<typeof serveSockets> | null = null;

    await app.register(fastifyWebsocket, {
      options: { maxPayload: HARD_FRAME_LIMIT },
      // A client error (oversized frame, broken framing) is the client's problem, not a server error.
      errorHandler: (error, socket, request) => {
        request.log.info({ code: (error as NodeJS.ErrnoException).code }, 'websocket dropped on a protocol error');
        socket.terminate();
      },
      // Before the HTTP server stops: record everyone's leave while the database is still open.
      preClose: async () => {
        await sockets?.close();
      },
    });
    sockets = serveSockets(app.websocketServer, hub, config.heartbeatIntervalSeconds);

    app.get(
      '/ws',
      {
        websocket: true,
        schema: { hide: true },
        preValidation: async (request, reply) => {
          const refused = refusedOrigin(config.allowedOrigins, request.headers.origin);
          if (refused) return reply.status(403).send({ error: refused });
        },
      },
      (socket) => sockets!.accept(socket),
    );
  };
}

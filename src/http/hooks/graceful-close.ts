// Graceful stop (SIGTERM): requests in progress run to their answer; nothing
// else holds the process.
//
// - Node's server.close() ends the keep-alive connections idle at that moment,
//   and no other: one opened without a request yet is kept until headersTimeout
//   (60 s), and one whose request was in progress stays open after its answer
//   until keepAliveTimeout (72 s). Either would hold a SIGTERM past main.ts's
//   hard limit, and the process would exit 1. So right before the server stops
//   listening, every connection with no request in progress is closed, and
//   from then on each connection is closed after its last answer (which says
//   Connection: close). WebSocket connections are left to the realtime
//   server's own goodbye.
// - A request that still reaches the app while it stops (parsed just before
//   the stop) is served like any other: the database closes only after the
//   last connection has. (Fastify's return503OnClosing would answer it with
//   its own body shape instead; it is off.)
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export function gracefulClose(app: FastifyInstance): void {
  let closing = false;
  const open = new Set<Socket>();
  const inProgress = new WeakMap<Socket, number>();
  app.server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  app.server.on('request', (request, response) => {
    const socket = request.socket;
    inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
    response.once('close', () => {
      const left = (inProgress.get(socket) ?? 1) - 1;
      inProgress.set(socket, left);
      if (closing && left === 0) socket.end();
    });
  });
  app.server.on('upgrade', (request) => inProgress.set(request.socket, Infinity));

  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });
  app.addHook('preClose', async () => {
    closing = true;
    for (const socket of open) if (!inProgress.get(socket)) socket.destroy();
  });
}

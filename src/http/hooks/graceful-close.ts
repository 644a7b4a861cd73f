// Graceful stop without waiting on silent clients. On close, Node's HTTP
// server ends idle keep-alive connections but keeps one that was opened and
// has not sent a request yet until headersTimeout (60 s): one such client (a
// browser's pre-connect, a pool's spare socket, a port scan) would hold a
// SIGTERM past main.ts's hard limit, and the process would exit 1. Here, right
// before the server stops listening, every connection with no request in
// progress is closed; requests in progress still run to their answer, and
// WebSocket connections are left to the realtime server's own goodbye.
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export function closeQuietConnectionsOnClose(app: FastifyInstance): void {
  const open = new Set<Socket>();
  const inProgress = new WeakMap<Socket, number>();
  app.server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  app.server.on('request', (request, response) => {
    const socket = request.socket;
    inProgress.set(socket, (inProgress.get(socket) ?? 0) + 1);
    response.once('close', () => inProgress.set(socket, (inProgress.get(socket) ?? 1) - 1));
  });
  app.server.on('upgrade', (request) => inProgress.set(request.socket, Infinity));
  app.addHook('preClose', async () => {
    for (const socket of open) if (!inProgress.get(socket)) socket.destroy();
  });
}

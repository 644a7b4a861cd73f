// Requests Node's HTTP parser refuses before Fastify ever sees them (a broken
// request line, a bad header, headers over 16 KiB, a lying Content-Length)
// still get the interface's shapes (docs/design.md#errors-and-limits): 400 is the array of validation
// objects, every other error is {error}. Fastify's default answer here is its
// own {error, message, statusCode}, which no client of ours expects; Node's
// own 417 has no body at all.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

const ANSWERS: Record<string, [number, string, unknown]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', { error: 'Request headers are too large (16 KiB at most)' }],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', { error: 'The request took too long to arrive' }],
};
const BAD_REQUEST: [number, string, unknown] = [400, 'Bad Request', [{ attribute: 'request', type: 'invalid', message: 'is not a valid HTTP/1.1 request' }]];

export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  // A client that went away, or a connection already answered: nothing to say.
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, body] = ANSWERS[error.code ?? ''] ?? BAD_REQUEST;
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(json)}\r\n` +
      `Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${json}`,
  );
}

/**
 * An Expect header other than 100-continue: Node answers 417 with an empty
 * body by itself; this gives that answer the {error} shape.
 */
export function answerUnmetExpectations(server: Server): void {
  server.on('checkExpectation', (_request, response) => {
    const json = JSON.stringify({ error: 'Only "Expect: 100-continue" is supported' });
    response.writeHead(417, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json), Connection: 'close' }).end(json);
  });
}

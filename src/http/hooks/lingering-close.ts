// A refused body is answered, then read and thrown away for a while before
// the connection closes (nginx's lingering_close), so that a client still
// sending it reads the 413 (docs/design.md#errors-and-limits).
//
// Fastify answers a body over the limit before reading it (the Content-Length
// says so) or as soon as the limit is passed, and marks the answer
// Connection: close; Node then ends the connection at once. A socket closed
// with bytes unread makes the kernel send RST, and a client still writing its
// body (Node's fetch, undici, writes a 5 MB body while the answer arrives)
// gets EPIPE or ECONNRESET instead of the answer it had not read yet
// (RFC 9112 §9.6: a server closes its sending side first and keeps reading).
// Here the sending side is closed after the answer, and what the client still
// sends is read and discarded until it stops (it usually does on reading the
// answer), or LINGER's bytes or time run out.
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface LingerLimits {
  /** Bytes read and discarded after the answer, at most. */
  bytes: number;
  /** Time after the answer, at most. */
  ms: number;
}

export const LINGER: LingerLimits = { bytes: 64 * 1024 * 1024, ms: 10_000 };

export function lingerAfterRefusedBody(app: FastifyInstance, limits: LingerLimits = LINGER): void {
  app.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode === 413 && !request.raw.complete) linger(request.raw, limits);
    done(null, payload);
  });
}

function linger(request: IncomingMessage, limits: LingerLimits): void {
  const socket = request.socket;
  // No connection to linger on: an app.inject() request's socket is a stand-in whose timer,
  // never cleared by a 'close', would fire 10 s later in whatever runs next in the process.
  if (!(socket instanceof Socket)) return;
  let discarded = 0;
  // Destroyed once the answer has been written out: never drop the 413 itself, but for the time limit.
  const close = () => {
    if (socket.writableFinished) socket.destroy();
    else socket.once('finish', () => socket.destroy());
  };
  const timer = setTimeout(() => socket.destroy(), limits.ms);
  socket.once('close', () => clearTimeout(timer));
  // Node calls destroySoon() after an answer that says Connection: close: only its half-close part here.
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
  };
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > limits.bytes) close();
  });
  // The whole body read: nothing unread is left, so closing sends no RST.
  request.once('end', close);
}

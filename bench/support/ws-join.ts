// A join as a user's browser makes it, for the benchmarks that run Parley in
// their own process: the realtime server listening on 127.0.0.1 (an ephemeral
// port) over the benchmark's services, and one real `ws` client that opens a
// socket, sends `join`, waits for `joined`, sends `leave`, waits for `left`
// and for the server's close (docs/signaling.md). Everything a join costs the
// server is in it: the HTTP upgrade, the frames, the hub, the database.
import WebSocket from 'ws';
import { buildApp } from '../../src/http/build-app.js';
import { realtimePlugin } from '../../src/realtime/ws-server.js';
import type { Services } from '../../src/services.js';

export interface JoinServer {
  wsUrl: string;
  /** The Origin a browser on Parley's own pages sends (the server accepts only those). */
  origin: string;
  close(): Promise<void>;
}

/** `services` must have been made with RECONNECT_GRACE_SECONDS=0 for a close to be a leave at once, as after `leave`. */
export async function startJoinServer(services: Services): Promise<JoinServer> {
  const app = await buildApp({ services, plugins: [realtimePlugin({ services })] });
  await app.listen({ port: 0, host: '127.0.0.1' });
  // This node's heartbeat row: without it the presence sweep would count its participants as on a dead node.
  await services.participation.registerNode();
  const { port } = app.server.address() as { port: number };
  return { wsUrl: `ws://127.0.0.1:${port}/ws`, origin: new URL(services.config.publicUrl).origin, close: () => app.close() };
}

/** One join and leave over a new socket; rejects on a refusal, an error or after `timeoutMs`. */
export function joinAndLeave(server: JoinServer, joinToken: string, timeoutMs = 10_000): Promise<void> {
  return new Promise((resolve, reject) => {
    // No compression: browsers offer it, but Parley's frames are small and the cost would be the client's as much as the server's.
    const socket = new WebSocket(server.wsUrl, { origin: server.origin, perMessageDeflate: false });
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.terminate();
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error(`join + leave not done within ${timeoutMs} ms`)), timeoutMs);
    socket.once('open', () => socket.send(JSON.stringify({ type: 'join', requestId: 'j', joinToken, displayName: 'Bench' })));
    let left = false;
    socket.on('message', (raw) => {
      const message = JSON.parse(String(raw)) as { type: string; requestId?: string; code?: string };
      if (message.requestId === 'j') {
        if (message.type !== 'joined') return fail(new Error(`join refused: ${message.code ?? message.type}`));
        socket.send(JSON.stringify({ type: 'leave', requestId: 'l' }));
      } else if (message.requestId === 'l') {
        if (message.type !== 'left') return fail(new Error(`leave refused: ${message.code ?? message.type}`));
        left = true;
      }
    });
    // The server closes the socket after `left`: the leave is recorded by then (handlers/leave.ts).
    socket.once('close', (code) => {
      if (!left) return fail(new Error(`closed (${code}) before the leave was done`));
      clearTimeout(timer);
      resolve();
    });
    socket.once('error', fail);
    socket.once('unexpected-response', (_request, response) => fail(new Error(`HTTP ${response.statusCode}`)));
  });
}

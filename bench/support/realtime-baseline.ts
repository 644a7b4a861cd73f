// The baseline of the realtime benchmarks, and the relay of the bare WebRTC
// call (bare-webrtc/): the smallest signaling server Node and `ws` allow. It
// speaks the subset of Parley's protocol the benchmarks use, with the same
// frames (docs/signaling.md): `join {requestId, joinToken, displayName}` ->
// `joined {requestId, self, peers}` (the join token names the room), `signal
// {to, data}` -> `signal {from, data}` to that peer only, and `peer-joined` /
// `peer-left`. JSON in, JSON out, rooms in a Map: no database, no validation
// beyond JSON.parse, no rate limits. What is left is what Node and ws cost.
//
// Run alone: PORT=4000 node --import tsx bench/support/realtime-baseline.ts
// (answers GET /healthz; WebSocket at /ws).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { pathToFileURL } from 'node:url';
import { WebSocketServer, type WebSocket } from 'ws';

export interface RelayServer {
  port: number;
  /** The HTTP server: bare-webrtc/ adds its page to it. */
  http: http.Server;
  close(): Promise<void>;
}

interface Member {
  id: string;
  name: string;
  socket: WebSocket;
}

/**
 * Listens on host:port (0: any free port). `page` answers the plain HTTP
 * requests other than /healthz (the bare WebRTC call serves its page there).
 */
export async function startRelayServer(options: { port?: number; host?: string; page?: http.RequestListener } = {}): Promise<RelayServer> {
  const server = http.createServer((request, response) => {
    if (request.url === '/healthz') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    } else if (options.page) {
      options.page(request, response);
    } else {
      response.writeHead(404).end();
    }
  });
  const wss = new WebSocketServer({ server, path: '/ws', maxPayload: 256 * 1024 });
  const rooms = new Map<string, Map<string, Member>>();

  const send = (socket: WebSocket, message: unknown) => {
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };

  wss.on('connection', (socket) => {
    let roomName = '';
    let room: Map<string, Member> | null = null;
    let self: Member | null = null;
    socket.on('message', (raw) => {
      let message: Record<string, any>;
      try {
        message = JSON.parse(String(raw));
      } catch {
        return;
      }
      if (message.type === 'join' && !self) {
        roomName = String(message.joinToken);
        room = rooms.get(roomName) ?? new Map();
        rooms.set(roomName, room);
        self = { id: randomBytes(16).toString('base64url').slice(0, 22), name: String(message.displayName), socket };
        const peers = [...room.values()].map((m) => ({ id: m.id, name: m.name, role: 'guest' }));
        const info = { id: self.id, name: self.name, role: 'guest' };
        for (const member of room.values()) send(member.socket, { type: 'peer-joined', peer: info });
        room.set(self.id, self);
        send(socket, { type: 'joined', requestId: message.requestId, self: info, peers });
      } else if (message.type === 'signal' && self && room) {
        const target = room.get(String(message.to));
        if (target) send(target.socket, { type: 'signal', from: self.id, data: message.data });
      }
    });
    socket.on('close', () => {
      if (!self || !room) return;
      room.delete(self.id);
      for (const member of room.values()) send(member.socket, { type: 'peer-left', peerId: self.id });
      if (room.size === 0) rooms.delete(roomName);
    });
    socket.on('error', () => socket.terminate());
  });

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    http: server,
    close: async () => {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const relay = await startRelayServer({ port: Number(process.env.PORT ?? 0) });
  process.stdout.write(`realtime baseline listening on ${relay.port}\n`);
  const stop = () => void relay.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

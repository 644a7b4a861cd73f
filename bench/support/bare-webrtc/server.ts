// The bare WebRTC call's server: its one page (index.html) and the minimal
// ws relay of realtime-baseline.ts for offer, answer and ICE.
//   PORT=4001 node --import tsx bench/support/bare-webrtc/server.ts   (GET /healthz, GET /?room=NAME, WebSocket /ws)
import fs from 'node:fs';
import { startRelayServer } from '../realtime-baseline.js';

const page = fs.readFileSync(new URL('./index.html', import.meta.url));
const server = await startRelayServer({
  port: Number(process.env.PORT ?? 0),
  page: (request, response) => {
    if (request.method === 'GET' && new URL(request.url ?? '/', 'http://x').pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page);
    } else {
      response.writeHead(404).end();
    }
  },
});
process.stdout.write(`bare WebRTC call on http://127.0.0.1:${server.port}/\n`);
const stop = () => void server.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);

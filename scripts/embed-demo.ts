// `npm run demo:embed`: serves the demo integrator page (docs/embed-demo.html)
// on http://localhost:8080 (DEMO_PORT), another site than a Parley on
// 127.0.0.1, as a real integrator's page is. Open it with a join link:
//   http://localhost:8080/?url=http://127.0.0.1:3000/join/<token>&name=Pat
// after allowing the origin for the tenant (docs/embedding.md, "Try it").
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const page = path.resolve(import.meta.dirname, '../docs/embed-demo.html');
const port = Number(process.env.DEMO_PORT ?? 8080);

const server = http.createServer((req, res) => {
  if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/') return res.writeHead(404).end();
  // Read on every request: edit the page and reload.
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(fs.readFileSync(page));
});
server.listen(port, '127.0.0.1', () => {
  console.log(`The demo integrator page: http://localhost:${port}/?url=<a join URL>`);
  console.log(`Allow its origin first: PUT /admin/tenants/<id>/frame-ancestors {"frame_ancestors": ["http://localhost:${port}"]}`);
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));

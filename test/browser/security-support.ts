// A stand-in for an integrator's web site in the browser security tests: a
// plain HTTP server on its own loopback port (so its own origin), serving
// what the test renders, and keeping every page it was asked for.
import http from 'node:http';
import type net from 'node:net';

export interface Site {
  origin: string;
  /** Paths (with query) of the pages requested so far, in order; not the browser's own favicon fetches. */
  hits: string[];
  close(): Promise<void>;
}

export async function startSite(render: (url: URL) => string): Promise<Site> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    // Chromium fetches a site's favicon after some navigations and not others: not a page the test sent it to.
    if (url.pathname === '/favicon.ico') return res.writeHead(404).end();
    hits.push(url.pathname + url.search);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(render(url));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hits,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** HTML-escapes an attribute value. */
export const attr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

// {PUBLIC_URL}/embed.js: the `<parley-room>` element for integrators' pages
// (docs/embedding.md; docs/design.md, "Embedding"), built apart from the pages
// into web/dist/embed/embed.js (web/vite.embed.config.ts).
//
// Its URL stays the same from one release to the next, so it cannot be cached
// for ever as the pages' hashed files are: an hour, then revalidated with its
// ETag (304 while unchanged). An element cached from an older release keeps
// working with a newer join page: both speak version 1 of the protocol, the
// element drops event fields it does not know, and the page accepts what
// version 1 documents. A module script from another site is fetched with CORS,
// hence Access-Control-Allow-Origin: * (public code, no credentials).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { gzipSync } from 'node:zlib';
import { NON_PAGE_HEADERS } from './page-html.js';
import { webDistDir } from './web-assets.js';

export interface EmbedScript {
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

/** The built element, or null when it has not been built (npm run build). */
export function loadEmbedScript(dir = webDistDir()): EmbedScript | null {
  const file = dir && path.join(dir, 'embed', 'embed.js');
  if (!file || !fs.existsSync(file)) return null;
  const body = fs.readFileSync(file);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, gzip: gzipSync(body, { level: 9 }), etag };
}

export const EMBED_CACHE_CONTROL = 'public, max-age=3600';

export const embedRoutes =
  (script: EmbedScript | null = loadEmbedScript()): FastifyPluginAsync =>
  async (app) => {
    app.get('/embed.js', { schema: { hide: true } }, async (request, reply) => {
      reply.headers(NON_PAGE_HEADERS);
      if (!script) return reply.status(404).type('text/plain; charset=utf-8').send('Not found');
      reply
        .header('Access-Control-Allow-Origin', '*')
        .header('Cross-Origin-Resource-Policy', 'cross-origin')
        .header('Cache-Control', EMBED_CACHE_CONTROL)
        .header('ETag', script.etag)
        .header('Vary', 'Accept-Encoding')
        .type('text/javascript; charset=utf-8');
      const wanted = request.headers['if-none-match'];
      if (wanted && wanted.split(',').some((tag) => tag.trim().replace(/^W\//, '') === script.etag)) return reply.status(304).send();
      if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) return reply.header('Content-Encoding', 'gzip').send(script.gzip);
      return reply.send(script.body);
    });
  };

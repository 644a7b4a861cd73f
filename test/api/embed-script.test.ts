// {PUBLIC_URL}/embed.js (docs/embedding.md, "The element"): the built
// element, one ES module with no imports, under its size budget, cacheable
// and revalidated, loadable as a module script from another site (CORS).
// Needs the build (npm run build; npm test builds first).
import { gunzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMBED_CACHE_CONTROL, embedRoutes, loadEmbedScript } from '../../src/http/routes/embed.routes.js';

/** docs/design.md, "Embedding": one small ES module, within a budget of 5 kB gzip. */
const BUDGET_GZIP_BYTES = 5 * 1024;

const script = loadEmbedScript();
const app = Fastify();

beforeAll(async () => {
  if (!script) throw new Error('web/dist/embed/embed.js is missing: run `npm run build` (or npx vite build --config web/vite.embed.config.ts)');
  await app.register(embedRoutes(script));
});
afterAll(() => app.close());

describe('GET /embed.js', () => {
  it('is the element as one ES module: no import, defines <parley-room>, under 5 kB gzip', async () => {
    const res = await app.inject({ method: 'GET', url: '/embed.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.rawPayload.length, `embed.js is ${res.rawPayload.length} bytes gzip`).toBeLessThan(BUDGET_GZIP_BYTES);
    const source = gunzipSync(res.rawPayload).toString('utf8');
    expect(source).toMatch(/customElements\.define\(["'`]parley-room["'`]/);
    // Nothing to fetch after it: an import would be resolved against the integrator's page.
    expect(source).not.toMatch(/\bimport\s*[("'`{*]|\bimport\s+\w/);
    expect(source).toMatch(/export\s*\{/);
    // Commands go to one exact origin, never to any window that happens to be there.
    expect(source).not.toMatch(/postMessage\([^)]*["'`]\*["'`]/);
  });

  it('is loadable from another site (CORS) and cacheable: an hour, then revalidated by its ETag (304)', async () => {
    const res = await app.inject({ method: 'GET', url: '/embed.js', headers: { origin: 'http://localhost:8080' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe('*');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers['cache-control']).toBe(EMBED_CACHE_CONTROL);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-encoding']).toBeUndefined();
    const etag = String(res.headers.etag);
    expect(etag).toMatch(/^"[\w-]{22}"$/);
    expect(res.body).toBe(script!.body.toString('utf8'));

    const again = await app.inject({ method: 'GET', url: '/embed.js', headers: { 'if-none-match': `"other", W/${etag}` } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect(again.headers.etag).toBe(etag);
    expect((await app.inject({ method: 'GET', url: '/embed.js', headers: { 'if-none-match': '"stale"' } })).statusCode).toBe(200);
    expect((await app.inject({ method: 'HEAD', url: '/embed.js' })).statusCode).toBe(200);
  });

  it('is 404 where the front end was not built', async () => {
    const bare = Fastify();
    await bare.register(embedRoutes(null));
    const res = await bare.inject({ method: 'GET', url: '/embed.js' });
    expect(res.statusCode).toBe(404);
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
    await bare.close();
  });
});

// The participant pages over HTTP: join page states and headers, escaping,
// the name pre-fill, feedback submission, the front end's files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebBuild } from '../../src/http/routes/web-assets.js';
import { en } from '../../src/shared/i18n/en.js';
import { CATALOGUES } from '../../src/shared/i18n/catalogues/index.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';

/** A test that starts an app or a server of its own: on a loaded machine that alone can take most of the config's 20 s. */
const OWN_APP = { timeout: 120_000 };

// A build with one script and one stylesheet, as Vite would make it.
const build: WebBuild = {
  script: '/assets/call-abc.js',
  styles: ['/assets/call-abc.css'],
  files: new Map([
    ['call-abc.js', { body: Buffer.from('console.log(1)'.repeat(50)), gzip: Buffer.from([0x1f, 0x8b]), type: 'text/javascript; charset=utf-8' }],
    ['call-abc.css', { body: Buffer.from('body{}'), gzip: null, type: 'text/css; charset=utf-8' }],
  ]),
};

let server: RealtimeServer;

beforeAll(async () => {
  server = await startRealtimeServer({}, build);
});
afterAll(() => server.close());

const page = (url: string) => server.app.inject({ method: 'GET', url });
const dataOf = (html: string) => JSON.parse(/<script type="application\/json" id="parley-data">(.*?)<\/script>/s.exec(html)![1]!);

describe('GET /join/{token}', () => {
  it('serves the join page with a strict policy, the room name as text and its data in a JSON block', async () => {
    const room = await server.createRoom({ name: '</script><script>alert(1)</script> & co', guest_display_name: 'Pat', enable_chat: false });
    const res = await page(`/join/${room.guest_token}`);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain('connect-src \'self\' ws://parley.test');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(res.headers['cache-control']).toBe('no-store');
    // No executable inline script: only the external module and the JSON block.
    expect(res.body).not.toContain('<script>alert(1)');
    expect(res.body).toContain('&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; co');
    expect(res.body).toContain('<script type="module" src="/assets/call-abc.js"></script>');
    expect(res.body).toContain('<link rel="stylesheet" href="/assets/call-abc.css">');
    expect(dataOf(res.body)).toEqual({
      page: 'join',
      joinToken: room.guest_token,
      roomName: '</script><script>alert(1)</script> & co',
      role: 'guest',
      displayName: 'Pat',
      settings: { chat: false, screenshare: true, invites: true, audioIndicator: true },
      lang: 'en',
      dir: 'ltr',
      catalogue: en,
      // No STUN or TURN configured in this server: the check gathers with none, and no credentials expire.
      network: { iceServers: [], iceTransportPolicy: 'all', ttlSeconds: null },
      // No frame-ancestors for this tenant: the page posts to no parent and obeys none (docs/design.md, "Embedding").
      embed: { origins: [], minimal: false },
    });
  });

  it('pre-fills ?name= over the room\u2019s display name, and knows the host link', async () => {
    const room = await server.createRoom({ host_display_name: 'Dr. Preset' });
    expect(dataOf((await page(`/join/${room.access_token}`)).body)).toMatchObject({ role: 'host', displayName: 'Dr. Preset' });
    const named = dataOf((await page(`/join/${room.access_token}?name=${encodeURIComponent('  Dr.   Given ')}`)).body);
    expect(named.displayName).toBe('Dr. Given');
    const long = dataOf((await page(`/join/${room.access_token}?name=${'x'.repeat(500)}`)).body);
    expect(long.displayName).toHaveLength(100);
  });

  it('answers an unknown or malformed token with a 404 page, and a closed room with a page without a form', async () => {
    for (const token of ['x'.repeat(43), 'not a token', '%3Cscript%3E']) {
      const res = await page(`/join/${token}`);
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('This link is not valid');
      expect(res.body).not.toContain('<script');
    }
    const room = await server.createRoom();
    await server.api('POST', `/api/rooms/${room.token}/close`);
    const closed = await page(`/join/${room.guest_token}`);
    expect(closed.statusCode).toBe(410);
    expect(closed.body).toContain('data-testid="room-closed"');
    expect(closed.body).not.toContain('join-button');
    expect(closed.body).not.toContain('parley-data');
  });
});

describe('POST /feedback', () => {
  async function participant() {
    const room = await server.createRoom();
    const client = await server.connect();
    const joined = await client.join(room.guest_token, 'Pat');
    await client.request({ type: 'leave' });
    return { room, token: joined.participantToken };
  }
  const post = (payload: unknown) => server.app.inject({ method: 'POST', url: '/feedback', payload: payload as object });

  it('records one feedback per participant session, visible in the feedback API', async () => {
    const { room, token } = await participant();
    const first = await post({ participant_token: token, rating: 'neutral', feedback: '  Sound dropped once  ' });
    expect(first.statusCode).toBe(201);
    const again = await post({ participant_token: token, rating: 'good' });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ error: expect.any(String) });
    const list = (await server.api('GET', '/api/room_feedbacks?rating=neutral')).json().room_feedbacks;
    expect(list).toEqual([expect.objectContaining({ room_token: room.token, rating: 'neutral', feedback: 'Sound dropped once' })]);
    expect((await server.api('GET', '/api/room_feedbacks/summary')).json()).toMatchObject({ neutral: 1 });
  });

  it('answers bad input with 400 in the interface\u2019s shape and an unknown participant with 404', async () => {
    const { token } = await participant();
    const bad = await post({ participant_token: token, rating: 'great' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual([expect.objectContaining({ attribute: 'rating' })]);
    const missing = await post({ rating: 'good' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual([expect.objectContaining({ attribute: 'participant_token' })]);
    const long = await post({ participant_token: token, rating: 'good', feedback: 'x'.repeat(2001) });
    expect(long.statusCode).toBe(400);
    expect(long.json()).toEqual([expect.objectContaining({ attribute: 'feedback', type: 'too_long' })]);
    const broken = await server.app.inject({ method: 'POST', url: '/feedback', headers: { 'content-type': 'application/json' }, payload: '{"rating":' });
    expect(broken.statusCode).toBe(400);
    const unknown = await post({ participant_token: 'y'.repeat(43), rating: 'good' });
    expect(unknown.statusCode).toBe(404);
  });
});

describe('other pages and files', () => {
  it('serves /left, the default return URL', async () => {
    const res = await page('/left');
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('You have left the call');
    expect(res.headers['content-security-policy']).toBeDefined();
  });

  it('serves built files with long caching and gzip, and nothing else', async () => {
    const js = await server.app.inject({ method: 'GET', url: '/assets/call-abc.js', headers: { 'accept-encoding': 'gzip, br' } });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-encoding']).toBe('gzip');
    expect(js.headers['cache-control']).toContain('immutable');
    const plain = await server.app.inject({ method: 'GET', url: '/assets/call-abc.js' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toContain('console.log(1)');
    for (const url of ['/assets/..%2F..%2Fpackage.json', '/assets/.vite%2Fmanifest.json', '/assets/nope.js']) {
      expect((await server.app.inject({ method: 'GET', url })).statusCode).toBe(404);
    }
  });
});

describe('the language of the pages', () => {
  const htmlAttributes = (html: string) => /<html lang="([a-z]+)" dir="(ltr|rtl)">/.exec(html)?.slice(1);
  const withLanguage = (url: string, acceptLanguage?: string) =>
    server.app.inject({ method: 'GET', url, headers: acceptLanguage ? { 'accept-language': acceptLanguage } : {} });

  it('is chosen by ?lang=, then the room\u2019s locale, then Accept-Language, then English; and only that catalogue is sent', async () => {
    const plain = await server.createRoom();
    const german = await server.createRoom({ locale: 'de' });
    const cases: [string, string | undefined, string, string][] = [
      [`/join/${plain.guest_token}`, undefined, 'en', 'ltr'],
      [`/join/${plain.guest_token}`, 'ar-EG,ar;q=0.9,en;q=0.5', 'ar', 'rtl'],
      [`/join/${german.guest_token}`, 'ar', 'de', 'ltr'],
      [`/join/${german.guest_token}?lang=fr`, 'ar', 'fr', 'ltr'],
      [`/join/${german.guest_token}?lang=xx`, 'ar', 'de', 'ltr'],
    ];
    for (const [url, acceptLanguage, lang, dir] of cases) {
      const res = await withLanguage(url, acceptLanguage);
      expect(htmlAttributes(res.body), url).toEqual([lang, dir]);
      const data = dataOf(res.body);
      expect({ lang: data.lang, dir: data.dir }).toEqual({ lang, dir });
      expect(data.catalogue).toEqual(CATALOGUES[lang as keyof typeof CATALOGUES]);
    }
  });

  it('also applies to the pages the server renders: unknown link, closed room, after the call', async () => {
    const room = await server.createRoom({ locale: 'ar' });
    expect((await server.api('POST', `/api/rooms/${room.token}/close`)).statusCode).toBe(204);
    const closed = await withLanguage(`/join/${room.guest_token}`);
    expect(htmlAttributes(closed.body)).toEqual(['ar', 'rtl']);
    expect(closed.body).toContain(CATALOGUES.ar['page.closed.title']);
    const unknown = await withLanguage(`/join/${'Z'.repeat(43)}?lang=pl`);
    expect(unknown.statusCode).toBe(404);
    expect(htmlAttributes(unknown.body)).toEqual(['pl', 'ltr']);
    expect(unknown.body).toContain(CATALOGUES.pl['page.notFound.title']);
    expect(htmlAttributes((await withLanguage('/left', 'tr-TR')).body)).toEqual(['tr', 'ltr']);
  });
});

describe('the join page\u2019s network data (the network check, the call\u2019s first connection)', () => {
  it('gets the ICE servers the call will use, with TURN credentials of the page\u2019s own that expire, and their life', OWN_APP, async () => {
    const turnServer = await startRealtimeServer(
      { TURN_SECRET: 'check-secret-0123456789', TURN_URLS: 'turn:turn.example:3478', ICE_TRANSPORT_POLICY: 'relay', TURN_TTL_SECONDS: '600' },
      build,
    );
    try {
      const room = await turnServer.createRoom();
      const load = async () => dataOf((await turnServer.app.inject({ method: 'GET', url: `/join/${room.guest_token}` })).body).network;
      const network = await load();
      expect(network.iceTransportPolicy).toBe('relay');
      expect(network.ttlSeconds).toBe(600);
      const [turn] = network.iceServers;
      expect(turn.urls).toEqual(['turn:turn.example:3478']);
      // coturn's REST scheme: "<expiry>:<user>", the user the page's own (never a participant's token, never shared).
      const [expiry, user] = String(turn.username).split(':');
      expect(user).toMatch(/^page-[0-9a-f]{16}$/);
      expect(Number(expiry) * 1000).toBeGreaterThan(Date.now() + 590_000);
      expect(Number(expiry) * 1000).toBeLessThanOrEqual(Date.now() + 600_000);
      expect(turn.credential).toMatch(/^[A-Za-z0-9+/]+=*$/);
      const again = String((await load()).iceServers[0].username).split(':')[1];
      expect(again).toMatch(/^page-/);
      expect(again).not.toBe(user);
    } finally {
      await turnServer.close();
    }
  });
});

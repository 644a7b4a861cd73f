// Hostile HTTP on a real socket (docs/security.md §3): malformed
// request lines and headers, oversized headers, lying Content-Length, broken
// chunked bodies, random Authorization and the write headers (Idempotency-Key,
// If-Match). Every answer is either a documented one or a closed connection,
// and the server answers the next ordinary request at once: nothing crashes it
// or ties it up.
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, roomBody, type TestContext, type TestTenant } from '../helpers/app.js';
import { RUNS, nastyString, tally } from '../helpers/arbitraries.js';
import { checkedRequest, documentedShapeProblem } from '../helpers/api.js';

let ctx: TestContext;
let tenant: TestTenant;
let port: number;
let roomToken: string;

beforeAll(async () => {
  ctx = await createTestContext({ env: { RATE_LIMIT_PER_MINUTE: '0' } });
  tenant = await ctx.tenant();
  await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  port = (ctx.app.server.address() as net.AddressInfo).port;
  roomToken = (await ctx.request({ method: 'POST', url: '/api/rooms', token: tenant.instanceToken, payload: roomBody() })).json().token;
});
afterAll(() => ctx.close());

interface RawAnswer {
  status: number | null;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes bytes, reads until the server closes or 1.5 s pass; parses the first response if there is one.
 * The 1.5 s proves that nothing came (a server waiting for the rest of a request is allowed to say
 * nothing); an answer that a stalled machine delays past it counts as none, which is allowed too.
 */
function raw(bytes: Buffer | string, limitMs = 1500): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const finish = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const head = /^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(text);
      if (!head) return resolve({ status: null, headers: {}, body: text });
      const headers: Record<string, string> = {};
      for (const line of head[2]!.split('\r\n')) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let body = head[3]!;
      if (headers['content-length']) body = Buffer.from(body, 'latin1').subarray(0, Number(headers['content-length'])).toString('utf8');
      resolve({ status: Number(head[1]), headers, body });
    };
    const timer = setTimeout(finish, limitMs);
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      // One complete response is enough.
      const text = Buffer.concat(chunks).toString('latin1');
      const length = /content-length: *(\d+)/i.exec(text)?.[1];
      const split = text.indexOf('\r\n\r\n');
      if (length !== undefined && split >= 0 && Buffer.byteLength(text.slice(split + 4), 'latin1') >= Number(length)) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.write(bytes);
  });
}

function answerProblem(answer: RawAnswer, head = false): string | null {
  if (answer.status === null) return null; // the server closed the connection without an answer: allowed
  // A HEAD answer has a GET's status and headers but no body (RFC 9110 §9.3.2): whatever
  // follows its header block is the next answer on the connection, so only the status is checked.
  if (head) return answer.status >= 500 ? `HEAD answered ${answer.status}` : null;
  return documentedShapeProblem({ statusCode: answer.status, headers: answer.headers, body: answer.body } as never);
}

/**
 * The server still answers. A hung server never does: the 15 s limit is far above the milliseconds a
 * working build takes on a loaded machine, and only a hang misses it.
 */
async function stillServing(): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(15_000) });
  expect(res.status).toBe(200);
}

const auth = () => `Authorization: Bearer ${tenant.instanceToken}\r\n`;
const headerText = fc.oneof(nastyString, fc.string({ unit: 'binary-ascii', maxLength: 100 }), fc.constantFrom('\r\n', '\n', '\r', '\u0000', ' ', ':', 'x'.repeat(20_000)));
const headerName = fc.oneof(fc.constantFrom('Authorization', 'Content-Type', 'Content-Length', 'Transfer-Encoding', 'Host', 'Idempotency-Key', 'If-Match', 'X-Forwarded-For', 'Connection', 'Expect', 'Upgrade'), fc.string({ unit: 'binary-ascii', maxLength: 20 }));
const requestLines = fc.oneof(
  { weight: 1, arbitrary: fc.constantFrom('GET /api/rooms HTTP/1.1', 'GET /api/rooms?page=2 HTTP/1.1', 'HEAD /api/rooms HTTP/1.1') },
  fc.constantFrom(
    'GET /api/rooms HTTP/1.1',
    'POST /api/rooms HTTP/1.1',
    `PUT /api/rooms/${'{token}'} HTTP/1.1`,
    'GET /api/rooms HTTP/1.0',
    'GET /api/rooms HTTP/2.0',
    'GET /api/rooms',
    'GET  /api/rooms  HTTP/1.1',
    'get /api/rooms HTTP/1.1',
    'FOO /api/rooms HTTP/1.1',
    'GET api/rooms HTTP/1.1',
    'GET http://evil.example/api/rooms HTTP/1.1',
    'GET * HTTP/1.1',
    'CONNECT 127.0.0.1:22 HTTP/1.1',
    'GET /api/rooms/../../etc/passwd HTTP/1.1',
    'GET /api/rooms?%%%%=%% HTTP/1.1',
    `GET /${'a'.repeat(10_000)} HTTP/1.1`,
  ),
  fc.string({ unit: 'binary-ascii', maxLength: 80 }),
);

describe('raw HTTP', () => {
  it('malformed request lines, headers and bodies get a documented answer or a closed connection; the server keeps serving', { timeout: 60_000 }, async () => {
    const seen = tally();
    await fc.assert(
      fc.asyncProperty(
        requestLines,
        fc.oneof(fc.constant([] as [string, string][]), fc.array(fc.tuple(headerName, headerText), { minLength: 1, maxLength: 4 })),
        fc.oneof(fc.constant(''), fc.string({ maxLength: 200 }), fc.constantFrom('{"name":"x"}', '5\r\nhello\r\n0\r\n\r\n', 'zz\r\nhello\r\n', '{'.repeat(1000))),
        fc.constantFrom('none', 'right', 'short', 'long', 'negative', 'two', 'chunked'),
        async (line, headers, body, framing) => {
          const framingHeader = {
            none: '',
            right: `Content-Length: ${Buffer.byteLength(body)}\r\n`,
            short: `Content-Length: ${Math.max(0, Buffer.byteLength(body) - 3)}\r\n`,
            long: `Content-Length: ${Buffer.byteLength(body) + 50}\r\n`,
            negative: 'Content-Length: -1\r\n',
            two: 'Content-Length: 1\r\nContent-Length: 2\r\n',
            chunked: 'Transfer-Encoding: chunked\r\n',
          }[framing];
          const request =
            line.replace('{token}', roomToken) +
            '\r\nHost: 127.0.0.1\r\n' +
            auth() +
            'Content-Type: application/json\r\n' +
            framingHeader +
            headers.map(([name, value]) => `${name}: ${value}\r\n`).join('') +
            '\r\n' +
            body;
          const answer = await raw(Buffer.from(request, 'utf8'));
          seen.add(answer.status ?? 0);
          const problem = answerProblem(answer, line.startsWith('HEAD '));
          if (problem) throw new Error(`${JSON.stringify(request.slice(0, 300))} -> ${problem}`);
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
    await stillServing();
    // Both sides were reached: requests good enough to be served, and refusals.
    seen.expectSome(200, 400);
  });

  it('headers over the size limit get 431 {error}', async () => {
    const answer = await raw(`GET /api/rooms HTTP/1.1\r\nHost: x\r\n${auth()}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer.status).toBe(431);
    expect(answerProblem(answer)).toBeNull();
    await stillServing();
  });

  it('a request that never finishes its headers does not hold the server', async () => {
    const sockets = await Promise.all(
      Array.from({ length: 20 }, () => new Promise<net.Socket>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
        socket.on('error', () => {});
        socket.write('GET /api/rooms HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      })),
    );
    try {
      await stillServing();
      const res = await fetch(`http://127.0.0.1:${port}/api/rooms`, { headers: { authorization: `Bearer ${tenant.instanceToken}` } });
      expect(res.status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });
});

describe('hostile headers', () => {
  it('random Authorization headers are 401 {error} with WWW-Authenticate, unless they carry the real token', { timeout: 60_000 }, async () => {
    const values = fc.oneof(
      nastyString,
      nastyString.map((s) => `Bearer ${s}`),
      fc.constantFrom('Bearer', 'Bearer ', 'bearer prl_', `Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer ${'prl_'.padEnd(47, 'A')}`, `Bearer prl_${'A'.repeat(43)}\u0000`),
      fc.constant('').map(() => `Bearer  ${tenant.instanceToken}  `),
      fc.constant('').map(() => `Bearer ${tenant.instanceToken.slice(0, -1)}`),
      fc.constant('').map(() => `Bearer ${tenant.instanceToken}x`),
      fc.constant('').map(() => `Bearer ${tenant.instanceToken.toUpperCase()}`),
    );
    await fc.assert(
      fc.asyncProperty(values, fc.constantFrom('/api/rooms', '/api/room_feedbacks', `/api/rooms/${'A'.repeat(22)}`, '/admin/tenants'), async (value, url) => {
        let res;
        try {
          res = await checkedRequest(ctx, { method: 'GET', url, headers: { authorization: value } });
        } catch (error) {
          // Values Node itself refuses to send (CR, LF, NUL) never reach a server: nothing to check.
          if (/Invalid character in header|ERR_INVALID_CHAR/.test(String(error))) return;
          throw error;
        }
        const accepted = value.trim() === `Bearer ${tenant.instanceToken}` || value === `Bearer  ${tenant.instanceToken}  `;
        if (accepted && url !== '/admin/tenants') return void expect([200, 404]).toContain(res.statusCode);
        expect(res.statusCode).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Bearer');
      }),
      { numRuns: RUNS },
    );
  });

  it('random Idempotency-Key and If-Match headers get a documented answer', { timeout: 60_000 }, async () => {
    const seen = tally();
    const header = fc.oneof(nastyString, fc.string({ unit: 'binary-ascii', maxLength: 60 }), fc.constantFrom('*', '"1"', 'W/"1"', '"1", "2"', '""', '"', ',', ', , ,', '"99999999999"'));
    await fc.assert(
      fc.asyncProperty(header, header, fc.constantFrom('POST', 'PUT', 'DELETE', 'CLOSE'), async (key, ifMatch, op) => {
        const headers = { 'idempotency-key': key, 'if-match': ifMatch };
        const options =
          op === 'POST'
            ? { method: 'POST' as const, url: '/api/rooms', payload: roomBody() }
            : op === 'PUT'
              ? { method: 'PUT' as const, url: `/api/rooms/${roomToken}`, payload: roomBody() }
              : op === 'DELETE'
                ? { method: 'DELETE' as const, url: `/api/rooms/${'B'.repeat(22)}` }
                : { method: 'POST' as const, url: `/api/rooms/${'B'.repeat(22)}/close` };
        let res;
        try {
          res = await checkedRequest(ctx, { ...options, token: tenant.instanceToken, headers });
        } catch (error) {
          if (/Invalid character in header|ERR_INVALID_CHAR/.test(String(error))) return;
          throw error;
        }
        seen.add(res.statusCode);
        expect([200, 201, 400, 404, 412, 422]).toContain(res.statusCode);
      }),
      // A well-formed key with a stale ETag (412) is rare among random pairs (one CI run drew none in 150):
      // one case of each answer the tally demands (412, 201, 400) always runs first, then the random ones.
      { numRuns: RUNS, examples: [['retry-7f3c', '"99999999999"', 'PUT'], ['retry-8e2d', '*', 'POST'], ['retry-9a1b', '"', 'PUT']] },
    );
    seen.expectSome(201, 400, 412);
  });
});

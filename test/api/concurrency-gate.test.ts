// The API's concurrency gate (src/http/hooks/concurrency-gate.ts): at most
// `limit` requests are worked on at once, the others start in arrival order,
// and a client that leaves gives back what it held. Over real HTTP: a slot is
// released by the response's 'close', which inject() would not exercise.
import http from 'node:http';
import net from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { concurrencyGate } from '../../src/http/hooks/concurrency-gate.js';
import { createTestContext, roomBody } from '../helpers/app.js';
import { startRealtimeServer } from '../helpers/realtime-server.js';
import { sleep, waitFor } from '../helpers/wait.js';

let app: FastifyInstance;
afterEach(() => app?.close());

/**
 * An app whose handler for /work/:n holds each request until the test finishes it. A request waits
 * at most `maxWaitMs` for a slot: 60 s unless the test is about that limit, so that a loaded
 * machine's slowness never turns a wait into a 503.
 */
async function gatedApp(limit: number, maxWaitMs = 60_000) {
  app = Fastify();
  const gate = concurrencyGate(limit, maxWaitMs);
  app.addHook('onRequest', gate.hook);
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  let running = 0;
  let mostAtOnce = 0;
  app.get<{ Params: { n: string } }>('/work/:n', async (request) => {
    running++;
    mostAtOnce = Math.max(mostAtOnce, running);
    started.push(request.params.n);
    await new Promise<void>((resolve) => finishers.set(request.params.n, resolve));
    running--;
    return { n: request.params.n };
  });
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  /** A request on a connection of its own (no pooling: one may be aborted). */
  const send = (n: string) => {
    const request = http.get(`${address}/work/${n}`, { agent: false });
    let body = '';
    let retryAfter: string | undefined;
    const answered = new Promise<number>((resolve, reject) => {
      request.on('response', (response) => {
        retryAfter = response.headers['retry-after'];
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve(response.statusCode!));
      });
      request.on('error', reject);
    });
    return { answered, abort: () => request.destroy(), body: () => JSON.parse(body) as unknown, retryAfter: () => retryAfter };
  };
  const finish = (n: string) => finishers.get(n)!();
  /** Sends each request once the one before it has reached the gate (started or waiting): they arrive in this order, however slow the machine. */
  const sendInOrder = async (names: string[]) => {
    const requests = [];
    for (const n of names) {
      const before = started.length + gate.waiting();
      requests.push(send(n));
      await waitFor(() => started.length + gate.waiting() === before + 1, 15_000, `${n} at the gate`);
    }
    return requests;
  };
  return { send, sendInOrder, finish, started, mostAtOnce: () => mostAtOnce, gate };
}

describe('API concurrency gate', () => {
  it('works on at most `limit` requests at once and starts the others in arrival order', async () => {
    const gate = await gatedApp(2);
    const requests = await gate.sendInOrder(['a', 'b', 'c', 'd', 'e']);
    await waitFor(() => gate.started.length === 2);
    // The three others have arrived and wait: nothing more starts on its own (a short watch proves it).
    await sleep(200);
    expect(gate.started).toEqual(['a', 'b']);
    for (const n of ['a', 'b', 'c', 'd', 'e']) {
      await waitFor(() => gate.started.includes(n));
      gate.finish(n);
    }
    expect(await Promise.all(requests.map((r) => r.answered))).toEqual([200, 200, 200, 200, 200]);
    expect(gate.mostAtOnce()).toBe(2);
    expect(gate.started).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('a client that leaves while waiting gives up its place, and one that leaves while served gives back its slot', async () => {
    const gate = await gatedApp(1);
    const first = gate.send('first');
    await waitFor(() => gate.started.length === 1);
    const quitter = gate.send('quitter');
    await waitFor(() => gate.gate.waiting() === 1, 15_000, 'the quitter waiting');
    quitter.abort();
    await quitter.answered.catch(() => {});
    await waitFor(() => gate.gate.waiting() === 0, 15_000, 'the quitter gone from the queue');
    const next = gate.send('next');
    await waitFor(() => gate.gate.waiting() === 1, 15_000, 'the next one waiting');
    expect(gate.started).toEqual(['first']);
    gate.finish('first');
    expect(await first.answered).toBe(200);
    // The slot went to the next one waiting, not to the one that left.
    await waitFor(() => gate.started.includes('next'));
    expect(gate.started).toEqual(['first', 'next']);

    // Served, then gone: its response closes and the slot is free again.
    next.abort();
    await next.answered.catch(() => {});
    const last = gate.send('last');
    await waitFor(() => gate.started.includes('last'));
    gate.finish('next');
    gate.finish('last');
    expect(await last.answered).toBe(200);
    expect(gate.mostAtOnce()).toBe(2);
  });

  it('a higher limit starts those waiting at once, in order; a lower one takes effect as requests finish', async () => {
    const gate = await gatedApp(1);
    const requests = await gate.sendInOrder(['a', 'b', 'c', 'd']);
    await waitFor(() => gate.started.length === 1);
    await waitFor(() => gate.gate.waiting() === 3);
    gate.gate.setLimit(3);
    await waitFor(() => gate.started.length === 3);
    expect(gate.started).toEqual(['a', 'b', 'c']);
    expect(gate.gate.waiting()).toBe(1);

    // Down to 1 with three at work: nothing is cut short, and 'd' starts only once two of them are done.
    gate.gate.setLimit(1);
    gate.finish('a');
    expect(await requests[0]!.answered).toBe(200);
    await sleep(100);
    expect(gate.started).toEqual(['a', 'b', 'c']);
    gate.finish('b');
    expect(await requests[1]!.answered).toBe(200);
    await sleep(100);
    expect(gate.started).toEqual(['a', 'b', 'c']);
    gate.finish('c');
    await waitFor(() => gate.started.includes('d'));
    gate.finish('d');
    expect(await Promise.all(requests.map((r) => r.answered))).toEqual([200, 200, 200, 200]);
    expect(gate.mostAtOnce()).toBe(3);
  });

  it('answers 503 with Retry-After, as for a database that does not answer, to a request that waited too long', async () => {
    const gate = await gatedApp(1, 300);
    const first = gate.send('first');
    await waitFor(() => gate.started.length === 1);
    const late = gate.send('late');
    expect(await late.answered).toBe(503);
    expect(late.retryAfter()).toBe('1');
    expect(late.body()).toEqual({ error: expect.stringContaining('try again') });
    gate.finish('first');
    expect(await first.answered).toBe(200);
    // Its place is gone with it: the next request starts at once.
    const next = gate.send('next');
    await waitFor(() => gate.started.includes('next'));
    gate.finish('next');
    expect(await next.answered).toBe(200);
    expect(gate.started).toEqual(['first', 'next']);
  });
});

describe('Parley with API_CONCURRENCY=1', () => {
  // Starts an app of its own: on a loaded machine that alone can take most of the config's 20 s.
  it('holds a second API request while the first is at work, and never /healthz', { timeout: 120_000 }, async () => {
    const ctx = await createTestContext({ env: { API_CONCURRENCY: '1' } });
    try {
      const tenant = await ctx.tenant();
      const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = new URL(address);
      // The first request holds the slot: its headers are in, its body is not (the gate is passed before the body is read).
      const body = JSON.stringify(roomBody());
      const first = net.connect(Number(port), '127.0.0.1');
      let firstAnswer = '';
      first.on('data', (chunk) => (firstAnswer += chunk));
      first.write(
        `POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${tenant.instanceToken}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n`,
      );
      // The first reaches the gate before the second is even sent: this process reads the socket it
      // wrote to before its timers resume this test, stalled or not.
      await sleep(200);
      let secondStatus = 0;
      const second = fetch(`${address}/api/rooms`, { headers: { authorization: `Bearer ${tenant.instanceToken}` } }).then((res) => (secondStatus = res.status));
      await sleep(300); // proves that the second does not start
      expect(secondStatus).toBe(0);
      expect((await fetch(`${address}/healthz`)).status).toBe(200);
      const metrics = await (await fetch(`${address}/metrics`)).text();
      expect(metrics).toMatch(/^parley_api_concurrency_limit 1$/m);
      expect(metrics).toMatch(/^parley_api_requests_waiting 1$/m);
      first.write(body);
      await waitFor(() => firstAnswer.startsWith('HTTP/1.1 201'), 15_000, 'the first request answered 201');
      expect(await second).toBe(200);
      first.destroy();
    } finally {
      await ctx.close();
    }
  });
});

/** Holds the event loop in turns of `turnMs` for `forMs`: what a node saturated by API callbacks looks like to the calls. */
async function holdTurns(forMs: number, turnMs = 15) {
  const until = Date.now() + forMs;
  while (Date.now() < until) {
    const held = Date.now() + turnMs;
    while (Date.now() < held);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('Parley: calls first (src/http/calls-first.ts)', () => {
  it('lowers the API limit while someone is connected and the turns run long, and gives it back once they leave', { timeout: 120_000 }, async () => {
    const server = await startRealtimeServer({ API_CONCURRENCY: '20' });
    try {
      const limit = async () => Number(/^parley_api_concurrency_limit (\d+)$/m.exec((await server.app.inject('/metrics')).body)?.[1]);
      // Nobody on the signaling: long turns take nothing from the API.
      await holdTurns(1000);
      expect(await limit()).toBe(20);

      const client = await server.connect();
      await waitFor(() => server.services.metrics.connectionsOpen() === 1);
      await holdTurns(2000);
      expect(await limit()).toBeLessThanOrEqual(8);

      client.terminate();
      await waitFor(async () => (await limit()) === 20, 15_000, 'the limit back at API_CONCURRENCY');
    } finally {
      await server.close();
    }
  });
});

describe('API_CONCURRENCY', () => {
  const base = { PUBLIC_URL: 'http://localhost:3000' };
  it('is a whole number from 0 (no gate) up, by default the database pool size', () => {
    expect(loadConfig(base).apiConcurrency).toBe(20);
    expect(loadConfig({ ...base, DATABASE_POOL_SIZE: '7' }).apiConcurrency).toBe(7);
    expect(loadConfig({ ...base, API_CONCURRENCY: '16' }).apiConcurrency).toBe(16);
    expect(loadConfig({ ...base, API_CONCURRENCY: '0' }).apiConcurrency).toBe(0);
    expect(() => loadConfig({ ...base, API_CONCURRENCY: '-1' })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, API_CONCURRENCY: 'many' })).toThrow(/API_CONCURRENCY/);
  });
});

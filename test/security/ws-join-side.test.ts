// The join side (docs/security.md "The join side"): tokens are
// unguessable, a socket reaches only its own room, a guest cannot act as
// host, closed and deleted rooms refuse, and only our own pages may open the
// signaling socket. Real `ws` clients against the listening app.
import fc from 'fast-check';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FAILED_JOINS } from '../../src/realtime/hub.js';
import { eventually, sleep } from '../helpers/wait.js';
import { ORIGIN, startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';
import { joinedPair, tokenShaped, type Client } from '../helpers/ws-client.js';

let server: RealtimeServer;
let tenantId: string;

beforeAll(async () => {
  server = await startRealtimeServer();
  tenantId = (await server.services.tenants.listTenants())[0]!.id;
  await server.services.tenants.setTenantFeature(tenantId, 'additional_participants', true);
});
afterAll(() => server?.close());

const page = (url: string) => server.app.inject({ method: 'GET', url });
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Messages a client received after `from` (an index into its received list). */
const since = (client: Client, from: number) => client.received.slice(from);

describe('tokens are unguessable', () => {
  it('join, invite and participant tokens: 43 base64url characters of 256 CSPRNG bits, unbiased and unrelated', { timeout: 60_000 }, async () => {
    const tokens: string[] = [];
    const roomTokens: string[] = [];
    for (let i = 0; i < 12; i++) {
      const room = await server.createRoom({ additional_guest_count: 3 });
      roomTokens.push(room.token);
      tokens.push(room.access_token, room.guest_token, ...room.additional_access_tokens.map((t: { token: string }) => t.token));
      const host = await server.connect();
      const joined = await host.join(room.access_token, 'Host');
      tokens.push(joined.participantToken);
      const invite = await host.request({ type: 'invite-create' });
      tokens.push((invite as { url: string }).url.split('/').pop()!);
      await host.request({ type: 'leave' });
    }
    expect(tokens).toHaveLength(12 * 7);
    for (const token of tokens) expect(token).toMatch(TOKEN);
    // The room's own token names it in API paths (not a join secret): 128 random bits.
    for (const token of roomTokens) expect(token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(new Set(roomTokens).size).toBe(roomTokens.length);
    expect(new Set(tokens).size).toBe(tokens.length);
    // No two share an 8-character prefix: a counter, a clock or a shared seed would.
    expect(new Set([...tokens, ...roomTokens].map((t) => t.slice(0, 8))).size).toBe(tokens.length + roomTokens.length);

    const bytes = Buffer.concat(tokens.map((t) => Buffer.from(t, 'base64url')));
    expect(bytes.length).toBe(tokens.length * 32);
    // Monobit: the share of one bits is 0.5 within 5 standard deviations (21,504 bits).
    let ones = 0;
    for (const byte of bytes) for (let b = 0; b < 8; b++) ones += (byte >> b) & 1;
    const bits = bytes.length * 8;
    expect(Math.abs(ones - bits / 2)).toBeLessThan(5 * Math.sqrt(bits) / 2);
    // Byte values: chi-square with 255 degrees of freedom stays far below 400 (p < 1e-8) for uniform bytes.
    const counts = new Array<number>(256).fill(0);
    for (const byte of bytes) counts[byte]!++;
    const expected = bytes.length / 256;
    const chi = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    expect(chi).toBeLessThan(400);
  });

  it('refuses a brute-force sample of random and near-miss tokens on the page, on the socket, for resuming and for feedback', { timeout: 60_000 }, async () => {
    const room = await server.createRoom();
    const real = room.guest_token as string;
    const flip = (c: string) => (c === 'A' ? 'B' : 'A');
    const nearMisses = [
      real.slice(0, -1),
      real + 'A',
      flip(real[0]!) + real.slice(1),
      real.slice(0, -1) + flip(real.at(-1)!),
      real.toUpperCase() === real ? real.toLowerCase() : real.toUpperCase(),
      `${real}%00`,
      `${real}%20`,
      ` ${real}`,
    ];
    const guesses = [...fc.sample(tokenShaped, { numRuns: 150, seed: 42 }), ...nearMisses];
    const bodies = new Set<string>();
    for (const guess of guesses) {
      const res = await page(`/join/${guess.replace(/ /g, '%20')}`);
      expect(res.statusCode, guess).toBe(404);
      bodies.add(res.body);
    }
    // Every miss answers alike: nothing tells a near miss from a wild guess.
    expect(bodies.size).toBe(1);

    // The socket: every guess not-found; a connection that keeps guessing is closed (4004) after a few.
    const socketGuesses = guesses.filter((g) => /^[A-Za-z0-9_-]{1,64}$/.test(g));
    expect(socketGuesses.length).toBeGreaterThan(150);
    for (let i = 0; i < socketGuesses.length; i += MAX_FAILED_JOINS) {
      const batch = socketGuesses.slice(i, i + MAX_FAILED_JOINS);
      const client = await server.connect();
      for (const guess of batch) {
        expect(await client.request({ type: 'join', joinToken: guess, displayName: 'Guess' })).toMatchObject({ type: 'error', code: 'not-found' });
      }
      if (batch.length === MAX_FAILED_JOINS) expect((await client.closed).code).toBe(4004);
    }

    // Resuming with a guessed participant token is an ordinary new join, never someone else's session.
    const holder = await server.connect();
    const held = await holder.join(real, 'Holder');
    for (const guess of fc.sample(tokenShaped, { numRuns: 20, seed: 7 })) {
      const client = await server.connect();
      const joined = await client.join(real, 'Guesser', guess);
      expect(joined.resumed).toBe(false);
      expect(joined.participantToken).not.toBe(guess);
      await client.request({ type: 'leave' });
    }
    expect(holder.socket.readyState).toBe(holder.socket.OPEN);
    expect((await server.getRoom(room.token)).current_participants).toEqual([held.participantToken]);

    for (const guess of fc.sample(tokenShaped, { numRuns: 50, seed: 9 })) {
      const res = await server.app.inject({ method: 'POST', url: '/feedback', payload: { participant_token: guess, rating: 'bad' } });
      expect(res.statusCode).toBe(404);
    }
  });
});

describe('a socket reaches only its own room', () => {
  it('nothing from room A reaches room B, whatever peer id A guesses or learns', async () => {
    const a = await joinedPair(server);
    const b = await joinedPair(server);
    const marks = { host: b.host.received.length, guest: b.guest.received.length };
    const description = { type: 'offer', sdp: 'v=0\r\n' };
    const targets = [b.h.self.id, b.g.self.id, ...fc.sample(fc.stringMatching(/^[A-Za-z0-9_-]{22}$/), { numRuns: 100, seed: 3 })];
    for (const to of targets) a.host.send({ type: 'signal', to, data: { description } });
    a.host.send({ type: 'media-state', audio: false, video: false });
    expect(await a.host.request({ type: 'screenshare-start', streamId: 'screen' })).toMatchObject({ type: 'ack' });
    expect(await a.host.request({ type: 'chat', text: 'for room A only' })).toMatchObject({ type: 'ack' });
    // Room A's own guest gets all of it: the messages were sent, they just never cross.
    expect((await a.guest.next('chat')).text).toBe('for room A only');
    await sleep(200); // proves that nothing arrives
    expect(a.guest.all('media-state')).toEqual([{ type: 'media-state', from: a.h.self.id, audio: false, video: false }]);
    expect(a.guest.all('screenshare-started')).toHaveLength(1);
    expect(a.guest.all('signal')).toEqual([]);
    expect(since(b.host, marks.host)).toEqual([]);
    expect(since(b.guest, marks.guest)).toEqual([]);
  });

  it('a leaked participant token of room B joins room A as a new participant and leaves its holder alone', async () => {
    const a = await server.createRoom();
    const b = await joinedPair(server);
    const mark = b.guest.received.length;
    const intruder = await server.connect();
    const joined = await intruder.join(a.guest_token, 'Intruder', b.g.participantToken);
    expect(joined.resumed).toBe(false);
    expect(joined.participantToken).not.toBe(b.g.participantToken);
    expect(joined.peers).toEqual([]);
    await sleep(200); // proves that nothing arrives
    expect(b.guest.socket.readyState).toBe(b.guest.socket.OPEN);
    expect(since(b.guest, mark)).toEqual([]);
    expect(b.host.all('peer-left')).toEqual([]);
    expect((await server.getRoom(b.room.token)).current_participants).toContain(b.g.participantToken);
    expect((await server.getRoom(a.token)).current_participants).toEqual([joined.participantToken]);
  });
});

describe('a guest cannot act as host', () => {
  it('invites (the one host-only action) are refused to every kind of guest', async () => {
    const room = await server.createRoom({ additional_guest_count: 1 });
    const host = await server.connect();
    await host.join(room.access_token, 'Host');
    const invite = (await host.request({ type: 'invite-create' })) as { url: string };
    const guestLinks = [room.guest_token, room.additional_access_tokens[0].token, invite.url.split('/').pop()!];
    for (const link of guestLinks) {
      const guest = await server.connect();
      const joined = await guest.join(link, 'Guest');
      expect(joined.self.role).toBe('guest');
      expect(await guest.request({ type: 'invite-create' })).toMatchObject({ type: 'error', code: 'forbidden' });
    }
  });

  it('host controls (admit, deny, remove) are refused to every kind of guest; a host cannot reach into another room', async () => {
    const room = await server.createRoom({ additional_guest_count: 1 });
    const { host, h, g } = await joinedPair(server, {});
    const ownHost = await server.connect();
    const oh = await ownHost.join(room.access_token, 'Host');
    const invite = (await ownHost.request({ type: 'invite-create' })) as { url: string };
    for (const link of [room.guest_token, room.additional_access_tokens[0].token, invite.url.split('/').pop()!]) {
      const guest = await server.connect();
      await guest.join(link, 'Guest');
      for (const type of ['admit', 'deny', 'remove'] as const) {
        expect(await guest.request({ type, peerId: oh.self.id })).toMatchObject({ type: 'error', code: 'forbidden' });
      }
    }
    // The host of this room names the participants of another room: nobody there is touched.
    const mark = host.received.length;
    for (const type of ['admit', 'deny', 'remove'] as const) {
      for (const peerId of [h.self.id, g.self.id]) expect(await ownHost.request({ type, peerId })).toMatchObject({ type: 'error', code: 'not-found' });
    }
    await sleep(200); // proves that nothing arrives
    expect(since(host, mark)).toEqual([]);
  });

  it('in a room with a waiting room every guest link waits, the host link never does', async () => {
    const room = await server.createRoom({ additional_guest_count: 1, enable_waiting_room: true });
    const host = await server.connect();
    expect((await host.join(room.access_token, 'Host')).type).toBe('joined');
    const invite = (await host.request({ type: 'invite-create' })) as { url: string };
    for (const link of [room.guest_token, room.additional_access_tokens[0].token, invite.url.split('/').pop()!]) {
      const guest = await server.connect();
      expect(await guest.request({ type: 'join', joinToken: link, displayName: 'Guest' })).toMatchObject({ type: 'waiting' });
    }
    // A second tab of the host link, after all of them: straight into the call, and shown the three.
    const secondTab = await server.connect();
    const joined = await secondTab.join(room.access_token, 'Host');
    expect(joined.waiting).toHaveLength(3);
  });

  it('a guest link with the host\u2019s participant token does not resume the host', async () => {
    const { room, host, h } = await joinedPair(server);
    const mark = host.received.length;
    const guest = await server.connect();
    const joined = await guest.join(room.guest_token, 'Impostor', h.participantToken);
    expect(joined.resumed).toBe(false);
    expect(joined.self.role).toBe('guest');
    expect(joined.participantToken).not.toBe(h.participantToken);
    expect(await guest.request({ type: 'invite-create' })).toMatchObject({ type: 'error', code: 'forbidden' });
    await sleep(200); // proves that nothing arrives
    // The host keeps its connection: no "replaced" (4002), only the newcomer announced.
    expect(host.socket.readyState).toBe(host.socket.OPEN);
    expect(since(host, mark).map((m) => m.type)).toEqual(['peer-joined']);
  });
});

describe('closed and deleted rooms refuse', () => {
  async function everyLink() {
    const room = await server.createRoom({ additional_guest_count: 1 });
    const host = await server.connect();
    const h = await host.join(room.access_token, 'Host');
    const invite = ((await host.request({ type: 'invite-create' })) as { url: string }).url.split('/').pop()!;
    return { room, host, h, links: [room.access_token, room.guest_token, room.additional_access_tokens[0].token, invite] as string[] };
  }

  it('closed: every link gets the closed page (410) and room-closed on the socket, resuming included; feedback still counts', async () => {
    const { room, host, h, links } = await everyLink();
    expect((await server.api('POST', `/api/rooms/${room.token}/close`)).statusCode).toBe(204);
    expect((await host.closed).code).toBe(4001);
    for (const link of links) {
      const res = await page(`/join/${link}`);
      expect(res.statusCode).toBe(410);
      expect(res.body).toContain('data-testid="room-closed"');
      expect(res.body).not.toContain('parley-data');
      const client = await server.connect();
      expect(await client.request({ type: 'join', joinToken: link, displayName: 'Late' })).toMatchObject({ type: 'error', code: 'room-closed' });
    }
    const back = await server.connect();
    expect(await back.request({ type: 'join', joinToken: room.access_token, displayName: 'Host', participantToken: h.participantToken })).toMatchObject({
      type: 'error',
      code: 'room-closed',
    });
    expect((await server.getRoom(room.token)).current_participants).toEqual([]);
    // The host was in the call when it was closed: the feedback page after it still works.
    expect((await server.app.inject({ method: 'POST', url: '/feedback', payload: { participant_token: h.participantToken, rating: 'good' } })).statusCode).toBe(201);
  });

  it('deleted: every link is unknown (404 page, not-found on the socket), resuming and feedback included', async () => {
    const { room, host, h, links } = await everyLink();
    expect((await server.api('DELETE', `/api/rooms/${room.token}`)).statusCode).toBe(204);
    expect((await host.closed).code).toBe(4001);
    for (const link of links) {
      expect((await page(`/join/${link}`)).statusCode).toBe(404);
      const client = await server.connect();
      expect(await client.request({ type: 'join', joinToken: link, displayName: 'Late', participantToken: h.participantToken })).toMatchObject({
        type: 'error',
        code: 'not-found',
      });
    }
    expect((await server.app.inject({ method: 'POST', url: '/feedback', payload: { participant_token: h.participantToken, rating: 'good' } })).statusCode).toBe(404);
  });
});

describe('only our own pages open the socket', () => {
  /** The HTTP status of a WebSocket upgrade sent with these headers (101 when accepted). */
  function upgradeStatus(headers: Record<string, string>): Promise<number> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(server.wsUrl, { headers });
      socket.once('open', () => {
        socket.terminate();
        resolve(101);
      });
      socket.once('unexpected-response', (_req, res) => {
        resolve(res.statusCode ?? 0);
        socket.terminate();
      });
      socket.once('error', (error) => {
        if (!String(error).includes('Unexpected server response')) reject(error);
      });
    });
  }

  it('refuses a foreign, missing, `null` or look-alike Origin before the upgrade, and accepts its own', async () => {
    expect(await upgradeStatus({ origin: ORIGIN })).toBe(101);
    // ws sends no Origin header unless told to: a non-browser client, or a stripped header.
    expect(await upgradeStatus({})).toBe(403);
    for (const origin of [
      'null',
      'http://evil.example',
      'https://parley.test',
      'http://parley.test:8080',
      'http://parley.test.evil.example',
      'http://evil.example/http://parley.test',
      'http://sub.parley.test',
      'HTTP://PARLEY.TEST',
      `${ORIGIN}, http://evil.example`,
      '',
    ]) {
      expect(await upgradeStatus({ origin }), origin).toBe(403);
    }
  });
});

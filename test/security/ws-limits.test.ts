// Abuse limits on the join side (docs/security.md "The join
// side"): frame size and rate, chat rate and length, display names, a
// receiver that stops reading, feedback length and one feedback per
// participant session. test/realtime covers the plain cases (one oversized
// frame, one 2,001-character feedback, a second feedback); these push on the
// edges and on what a flood does to everyone else.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FEEDBACK_LENGTH } from '../../src/domain/feedback/feedback.service.js';
import { MAX_CHAT_LENGTH, MAX_FRAME_BYTES } from '../../src/shared/protocol.js';
import { eventually, sleep } from '../helpers/wait.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';
import { joinedPair, type Client } from '../helpers/ws-client.js';

let server: RealtimeServer;

beforeAll(async () => {
  // A slow heartbeat: the test of a receiver that stops reading must see the buffer limit act, not the missed pongs.
  server = await startRealtimeServer({ HEARTBEAT_INTERVAL_SECONDS: '30' });
});
afterAll(() => server?.close());

/** A frame of exactly `bytes` UTF-8 bytes: an unknown-type request padded with a filler field. */
function frameOfBytes(bytes: number, requestId: string): string {
  const head = `{"type":"padding","requestId":"${requestId}","x":"`;
  return head + 'x'.repeat(bytes - head.length - 2) + '"}';
}

const repliesTo = (client: Client, prefix: string) => client.received.filter((m) => 'requestId' in m && m.requestId?.startsWith(prefix));

describe('frame size', () => {
  it('takes a frame of exactly the limit, refuses one byte more with too-large and its requestId, and keeps the connection', async () => {
    const client = await server.connect();
    client.send(frameOfBytes(MAX_FRAME_BYTES, 'at-limit'));
    client.send(frameOfBytes(MAX_FRAME_BYTES + 1, 'over-limit'));
    await eventually(() => repliesTo(client, 'at-limit').length + repliesTo(client, 'over-limit').length === 2, 10_000, 'both answered');
    expect(repliesTo(client, 'at-limit')).toEqual([expect.objectContaining({ type: 'error', code: 'unknown-type' })]);
    expect(repliesTo(client, 'over-limit')).toEqual([expect.objectContaining({ type: 'error', code: 'too-large' })]);
    expect(client.socket.readyState).toBe(client.socket.OPEN);
  });
});

describe('frame rate', () => {
  it('answers requests over the rate with rate-limited and their requestId, then serves again after a pause', async () => {
    const client = await server.connect();
    for (let i = 0; i < 450; i++) client.send({ type: 'padding', requestId: `flood-${i}` });
    await eventually(() => repliesTo(client, 'flood-').length === 450, 10_000, 'every request answered');
    const codes = repliesTo(client, 'flood-').map((m) => (m.type === 'error' ? m.code : m.type));
    expect(codes.filter((c) => c === 'unknown-type').length).toBeGreaterThanOrEqual(400);
    expect(codes.filter((c) => c === 'rate-limited').length).toBeGreaterThan(0);
    // Each request got exactly one reply.
    expect(new Set(repliesTo(client, 'flood-').map((m) => (m as { requestId: string }).requestId)).size).toBe(450);
    await sleep(1100); // the pause the bucket needs to refill (the behaviour's own time: at least this, on any machine)
    expect(await client.request({ type: 'padding' })).toMatchObject({ type: 'error', code: 'unknown-type' });
    expect(client.socket.readyState).toBe(client.socket.OPEN);
  });

  it('closes a connection that keeps flooding (1008) and records its participant as gone; the room carries on', async () => {
    const { room, host, guest, g } = await joinedPair(server);
    for (let i = 0; i < 1500; i++) guest.send({ type: 'media-state', audio: i % 2 === 0, video: true });
    expect((await guest.closed).code).toBe(1008);
    expect((await host.next('peer-left')).peerId).toBe(g.self.id);
    expect(host.all('media-state').length).toBeLessThanOrEqual(460);
    await eventually(async () => (await server.getRoom(room.token)).current_participants.length === 1, 10_000, 'flooder gone');
    const back = await server.connect();
    expect((await back.join(room.guest_token, 'Guest', g.participantToken)).resumed).toBe(true);
  });
});

describe('chat', () => {
  it('passes 10 messages at once, then rate-limits; the others receive exactly the accepted ones', async () => {
    const { host, guest } = await joinedPair(server);
    const replies = await Promise.all(Array.from({ length: 15 }, (_, i) => host.request({ type: 'chat', text: `message ${i}` })));
    const accepted = replies.filter((r) => r.type === 'ack').length;
    expect(accepted).toBe(10);
    expect(replies.filter((r) => r.type === 'error' && r.code === 'rate-limited')).toHaveLength(5);
    await eventually(() => guest.all('chat').length === accepted, 10_000, 'chat delivered');
    await sleep(200); // proves that no more arrive
    expect(guest.all('chat')).toHaveLength(accepted);
  });

  it('counts characters, not UTF-16 units or bytes: 2,000 emoji pass, 2,001 characters and blank text do not', async () => {
    const { host, guest } = await joinedPair(server);
    const emoji = '😀'.repeat(MAX_CHAT_LENGTH);
    expect(await host.request({ type: 'chat', text: emoji })).toMatchObject({ type: 'ack' });
    expect((await guest.next('chat')).text).toBe(emoji);
    const rtl = '\u202Eשלום\u202C مرحبا \u0000 <b>x</b>';
    expect(await host.request({ type: 'chat', text: rtl })).toMatchObject({ type: 'ack' });
    // Relayed untouched: the page shows it as text.
    expect((await guest.next('chat')).text).toBe(rtl);
    for (const text of ['x'.repeat(MAX_CHAT_LENGTH + 1), '😀'.repeat(MAX_CHAT_LENGTH + 1), '   ', '\n\t', '']) {
      expect(await host.request({ type: 'chat', text })).toMatchObject({ type: 'error', code: 'bad-request' });
    }
  });
});

describe('display names', () => {
  it('are cleaned of control and bidi-override characters and cut to 100 characters; absurd ones are refused', async () => {
    const room = await server.createRoom({ guest_display_name: 'Patient' });
    const cases: [string, string][] = [
      ['Dr.\u0000Evil\u0007', 'Dr. Evil'],
      // An override would make "Dr. Smith" of "htimS .rD" and run on into the text after the name.
      ['\u202Ehtims .rD', 'htims .rD'],
      ['\u2066Ann\u2069 \u202AB\u202C', 'Ann B'],
      ['مرحبا שלום', 'مرحبا שלום'],
      ['👩‍⚕️'.repeat(30), [...'👩‍⚕️'.repeat(30)].slice(0, 100).join('')],
      ['\u0000\u202E   ', 'Patient'],
    ];
    for (const [given, shown] of cases) {
      const client = await server.connect();
      const joined = await client.join(room.guest_token, given);
      expect(joined.self.name, JSON.stringify(given)).toBe(shown);
      await client.request({ type: 'leave' });
    }
    const client = await server.connect();
    expect(await client.request({ type: 'join', joinToken: room.guest_token, displayName: 'x'.repeat(401) })).toMatchObject({
      type: 'error',
      code: 'bad-request',
    });
  });
});

describe('a receiver that stops reading', () => {
  it('is dropped instead of buffering without end, and the sender carries on', { timeout: 120_000 }, async () => {
    const { room, host, guest, g } = await joinedPair(server);
    // The guest's side stops reading from TCP: what a frozen tab or a hostile client looks like.
    (guest.socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const sdp = 'a'.repeat(MAX_FRAME_BYTES - 200);
    for (let i = 0; i < 380; i++) host.send({ type: 'signal', to: g.self.id, data: { description: { type: 'offer', sdp } } });
    expect((await host.next('peer-left', 60_000)).peerId).toBe(g.self.id);
    expect(await host.request({ type: 'chat', text: 'still here' })).toMatchObject({ type: 'ack' });
    expect((await server.getRoom(room.token)).current_participants).toHaveLength(1);
  });
});

describe('feedback', () => {
  async function participant(existing?: Record<string, any>) {
    const room = existing ?? (await server.createRoom());
    const client = await server.connect();
    const joined = await client.join(room.guest_token, 'Pat');
    return { client, joined, room };
  }
  const post = (payload: unknown) => server.app.inject({ method: 'POST', url: '/feedback', payload: payload as object });

  it('counts characters: 2,000 emoji are stored whole, 2,001 characters are 400 too_long', async () => {
    const a = await participant();
    const long = '🩺'.repeat(MAX_FEEDBACK_LENGTH);
    expect((await post({ participant_token: a.joined.participantToken, rating: 'good', feedback: long })).statusCode).toBe(201);
    const list = (await server.api('GET', '/api/room_feedbacks?per_page=100')).json().room_feedbacks as { feedback?: string }[];
    expect(list.some((f) => f.feedback === long)).toBe(true);
    const b = await participant();
    const over = await post({ participant_token: b.joined.participantToken, rating: 'good', feedback: '🩺'.repeat(MAX_FEEDBACK_LENGTH + 1) });
    expect(over.statusCode).toBe(400);
    expect(over.json()).toEqual([expect.objectContaining({ attribute: 'feedback', type: 'too_long' })]);
  });

  it('takes NUL, direction marks and markup in a comment as text, never a 500', async () => {
    for (const comment of ['a\u0000b', '\u0000', '\u202Eevil\u202C <script>alert(1)</script>', "'; drop table room_feedbacks; --", '\uD800 lone']) {
      const p = await participant();
      const res = await post({ participant_token: p.joined.participantToken, rating: 'neutral', feedback: comment });
      // PostgreSQL text cannot hold U+0000: refused as invalid input rather than failing in the database.
      if (comment.includes('\u0000')) expect(res.json()).toEqual([expect.objectContaining({ attribute: 'feedback', type: 'invalid' })]);
      else expect(res.statusCode, JSON.stringify(comment)).toBe(201);
    }
  });

  it('one per participant session: ten submissions at once give one 201 and nine 409; a resumed session is the same session', async () => {
    const p = await participant();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => post({ participant_token: p.joined.participantToken, rating: i % 2 ? 'good' : 'bad' })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, ...Array(9).fill(409)]);
    p.client.terminate();
    await eventually(async () => (await server.getRoom(p.room.token)).current_participants.length === 0, 10_000, 'drop noticed');
    const again = await server.connect();
    const resumed = await again.join(p.room.guest_token, 'Pat', p.joined.participantToken);
    expect(resumed.resumed).toBe(true);
    expect((await post({ participant_token: resumed.participantToken, rating: 'good' })).statusCode).toBe(409);
    // Another join from the same link is another session, with its own feedback.
    const other = await participant(p.room);
    expect((await post({ participant_token: other.joined.participantToken, rating: 'good' })).statusCode).toBe(201);
  });
});

// Secrets in logs, the join side (docs/security.md "The join
// side"): a whole call over real `ws` clients at LOG_LEVEL=trace, with TURN
// credentials, invites, errors, a drop and resume, feedback, a flood, an
// oversized frame, a refused origin, close and delete. No join token,
// participant token, TURN credential, join URL or call content appears in any
// log line, not even in part.
import { sql } from 'kysely';
import { Writable } from 'node:stream';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebBuild } from '../../src/http/routes/web-assets.js';
import { MAX_FRAME_BYTES } from '../../src/shared/protocol.js';
import { ADMIN_TOKEN } from '../helpers/app.js';
import { eventually } from '../helpers/wait.js';
import { startRealtimeServer, type RealtimeServer } from '../helpers/realtime-server.js';

const TURN_SECRET = 'turn-shared-secret-0f3a9c2e71b4';
const STATIC_ICE_CREDENTIAL = 'static-ice-credential-77d1e0';
const lines: string[] = [];
let server: RealtimeServer;
/** A front end of one file: the pages render in full (their bodies hold the join token, their log lines must not). */
const build: WebBuild = { script: '/assets/call.js', styles: [], files: new Map([['call.js', { body: Buffer.from('0'), gzip: null, type: 'text/javascript' }]]) };

beforeAll(async () => {
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  server = await startRealtimeServer(
    {
      LOG_LEVEL: 'trace',
      PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
      TURN_SECRET,
      TURN_URLS: 'turn:127.0.0.1:3478?transport=udp',
      ICE_SERVERS: JSON.stringify([{ urls: 'turn:turn.example:3478', username: 'static-user', credential: STATIC_ICE_CREDENTIAL }]),
    },
    build,
    { logStream },
  );
});
afterAll(() => server?.close());

describe('the logs of a whole call', () => {
  it('hold no join token, participant token, TURN credential, join URL or call content', { timeout: 60_000 }, async () => {
    /** Secret -> what it is, and whether any 16 characters of it in a row count (URLs: only whole; their tokens count apart). */
    const secrets = new Map<string, { what: string; partial: boolean }>();
    const keep = (what: string, value: string | undefined, partial = true) => {
      if (value) secrets.set(value, { what, partial });
    };
    keep('admin token', ADMIN_TOKEN);
    keep('API token', server.token);
    keep('TURN secret', TURN_SECRET);
    keep('static ICE credential', STATIC_ICE_CREDENTIAL);

    const tenantId = (await server.services.tenants.listTenants())[0]!.id;
    await server.services.tenants.setTenantFeature(tenantId, 'additional_participants', true);
    const admin = await server.app.inject({
      method: 'PUT',
      url: `/admin/tenants/${tenantId}/frame-ancestors`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { frame_ancestors: ['https://app.example.com'] },
    });
    expect(admin.statusCode).toBe(200);

    const room = await server.createRoom({ additional_guest_count: 1, return_url: 'https://clinic.example/after?visit=secret-visit-id' });
    keep('host token', room.access_token);
    keep('guest token', room.guest_token);
    keep('additional guest token', room.additional_access_tokens[0].token);
    keep('host join URL', room.host_join_url, false);
    keep('guest join URL', room.guest_join_url, false);
    keep('return URL', room.return_url, false);
    keep('visit id in the return URL', 'secret-visit-id');

    // The pages, with the name in the query string.
    for (const url of [`/join/${room.guest_token}`, `/join/${room.access_token}?name=Dr.%20Secret`, `/join/${room.guest_token}/x`, `/join/${'q'.repeat(43)}`]) {
      await server.app.inject({ method: 'GET', url });
    }

    // The call.
    const host = await server.connect();
    const guest = await server.connect();
    const h = await host.join(room.access_token, 'Dr. Secret');
    const g = await guest.join(room.guest_token, 'Patient Secret');
    for (const joined of [h, g]) {
      keep('participant token', joined.participantToken);
      for (const ice of joined.iceServers) keep('TURN credential', ice.credential);
    }
    expect(g.iceServers.some((s) => s.credential && s.credential !== STATIC_ICE_CREDENTIAL)).toBe(true);
    const sdp = 'v=0\r\na=ice-ufrag:sdpufragsecret\r\na=ice-pwd:sdp-ice-password-secret-0123\r\n';
    keep('ICE password in the SDP', 'sdp-ice-password-secret-0123');
    host.send({ type: 'signal', to: g.self.id, data: { description: { type: 'offer', sdp } } });
    guest.send({ type: 'signal', to: h.self.id, data: { candidate: { candidate: 'candidate:1 1 udp 1 10.9.8.7 5000 typ host', sdpMid: '0' } } });
    await guest.next('signal');
    const chat = 'chat: the patient reports chest pain 4b1d';
    keep('chat text', chat);
    expect(await guest.request({ type: 'chat', text: chat })).toMatchObject({ type: 'ack' });
    const invite = (await host.request({ type: 'invite-create' })) as { url: string };
    keep('invite URL', invite.url, false);
    keep('invite token', invite.url.split('/').pop());
    const invited = await server.connect();
    const i = await invited.join(invite.url.split('/').pop()!, 'Friend');
    keep('participant token', i.participantToken);
    const extra = await server.connect();
    keep('participant token', (await extra.join(room.additional_access_tokens[0].token, 'Extra')).participantToken);

    // Mistakes and abuse, each with a secret inside.
    guest.send({ type: 'no-such-type', requestId: 'x', joinToken: room.access_token });
    guest.send(`{"broken": "${room.access_token}`);
    await guest.request({ type: 'join', joinToken: room.access_token, displayName: 'again' });
    const stranger = await server.connect();
    await stranger.request({ type: 'join', joinToken: room.access_token.split('').reverse().join(''), displayName: 'x', participantToken: h.participantToken });
    guest.send({ type: 'chat', requestId: 'big', text: room.access_token.repeat(Math.ceil(MAX_FRAME_BYTES / 40)) });
    const huge = await server.connect();
    huge.send(room.access_token.repeat(Math.ceil((MAX_FRAME_BYTES * 5) / 43)));
    await huge.closed;
    const flooder = await server.connect();
    await flooder.join(room.guest_token, 'Flooder');
    for (let n = 0; n < 1200; n++) flooder.send({ type: 'media-state', audio: true, video: n % 2 === 0 });
    await flooder.closed;
    await new Promise<void>((resolve) => {
      const refused = new WebSocket(server.wsUrl, { origin: `https://evil.example/${room.access_token}` });
      refused.once('unexpected-response', () => resolve());
      refused.once('error', () => resolve());
    });

    // The database refusing a value and quoting it, as PostgreSQL's own errors do ("invalid input syntax for
    // type …: "<value>"", "Key (token)=(<value>) already exists"): a trigger stands in for such a failure.
    const db = server.services.database.db;
    await sql`create function parley_test_refuse() returns trigger language plpgsql as $$
      begin
        if tg_table_name = 'participants' then
          raise exception 'invalid input value: "%"', new.token using detail = 'Key (token)=(' || new.token || ') is refused', hint = new.display_name;
        end if;
        raise exception 'invalid input value: "%"', new.participant_token using detail = 'Key (participant_token)=(' || new.participant_token || ')';
      end $$`.execute(db);
    await sql`create trigger parley_test_refuse before insert on participants for each row execute function parley_test_refuse()`.execute(db);
    await sql`create trigger parley_test_refuse before insert on room_feedbacks for each row execute function parley_test_refuse()`.execute(db);
    const unlucky = await server.connect();
    expect(await unlucky.request({ type: 'join', joinToken: room.guest_token, displayName: 'Unlucky' })).toMatchObject({ type: 'error', code: 'unavailable' });
    expect((await server.app.inject({ method: 'POST', url: '/feedback', payload: { participant_token: h.participantToken, rating: 'good' } })).statusCode).toBe(500);
    await sql`drop trigger parley_test_refuse on participants`.execute(db);
    await sql`drop trigger parley_test_refuse on room_feedbacks`.execute(db);
    await sql`drop function parley_test_refuse()`.execute(db);
    // The failures are in the log, named by their SQLSTATE, without the values.
    expect(lines.some((l) => l.includes('signaling request failed') && l.includes('P0001'))).toBe(true);
    expect(lines.some((l) => l.includes('unexpected error') && l.includes('P0001'))).toBe(true);

    // A drop and a resume, a leave, feedback.
    guest.terminate();
    await host.next('peer-left');
    const back = await server.connect();
    await back.join(room.guest_token, 'Patient Secret', g.participantToken);
    expect(await back.request({ type: 'leave' })).toMatchObject({ type: 'left' });
    const comment = 'feedback: the doctor was kind 9e2f';
    keep('feedback text', comment);
    const post = (payload: unknown) => server.app.inject({ method: 'POST', url: '/feedback', payload: payload as object });
    expect((await post({ participant_token: g.participantToken, rating: 'good', feedback: comment })).statusCode).toBe(201);
    expect((await post({ participant_token: g.participantToken, rating: 'good', feedback: comment })).statusCode).toBe(409);
    expect((await post({ participant_token: h.participantToken, rating: 'great', feedback: comment })).statusCode).toBe(400);
    expect((await post({ participant_token: room.access_token, rating: 'bad' })).statusCode).toBe(404);

    // Close this room (ejects everyone), delete another that is in a call.
    expect((await server.api('POST', `/api/rooms/${room.token}/close`)).statusCode).toBe(204);
    await host.closed;
    const other = await server.createRoom();
    keep('host token', other.access_token);
    const o = await (await server.connect()).join(other.access_token, 'Other');
    keep('participant token', o.participantToken);
    expect((await server.api('DELETE', `/api/rooms/${other.token}`)).statusCode).toBe(204);
    await eventually(() => lines.some((l) => l.includes('room closed')), 10_000, 'ejection logged');

    // The scenario did log (requests, joins, ejections, protocol errors at trace level): the scan has something to scan.
    expect(lines.length).toBeGreaterThan(20);
    expect(lines.some((l) => l.includes('participant joined'))).toBe(true);
    expect(lines.some((l) => l.includes('"route":"/join/:token"'))).toBe(true);
    expect(lines.some((l) => l.includes('"route":"/feedback"'))).toBe(true);

    const leaks: string[] = [];
    for (const [secret, { what, partial }] of secrets) {
      // Whole or in part: any 16 characters in a row of a secret (or the whole of a short one).
      const probes = !partial || secret.length <= 16 ? [secret] : Array.from({ length: secret.length - 15 }, (_, k) => secret.slice(k, k + 16));
      const line = lines.find((l) => probes.some((p) => l.includes(p)));
      if (line) leaks.push(`${what}: ${line.slice(0, 300)}`);
    }
    expect(leaks).toEqual([]);
  });
});

// What the two hand-written servers of the API benchmark share
// (baseline-server.ts on Parley's schema, independent-baseline-server.ts on a
// schema of its own): the HTTP side of the measured room endpoints, so that
// they differ only in their SQL. node:http, no framework; the request body
// checks are a few hand-written lines (the benchmark sends valid bodies), and
// the room's JSON is made by Parley's presenter (a pure function, no more code
// than a hand-written one would run).
import http from 'node:http';
import pg from 'pg';
import type { RoomView } from '../../src/domain/rooms/rooms.service.js';
import { presentRoom } from '../../src/http/routes/rooms.presenter.js';

export const API_TOKEN = /^prl_[A-Za-z0-9_-]{43}$/;
const ROOM_TOKEN = /^[A-Za-z0-9_-]{16,64}$/;

type Row = Record<string, any>;
export type Answer = [status: number, body: unknown];

export interface Settings {
  name: string;
  meeting_duration: number;
  scheduled_at: Date;
  return_url: string | null;
  host_return_url: string | null;
  host_display_name: string | null;
  guest_display_name: string | null;
  enable_chat: boolean;
  enable_screenshare: boolean;
  enable_invites: boolean;
  enable_audio_indicator: boolean;
}

const INT8 = 20;

/**
 * A pg Pool of DATABASE_URL (DATABASE_POOL_SIZE connections, 20 unless set) and
 * its query function. Every statement is a named one: PostgreSQL parses and
 * plans it once per connection, as Parley's hot statements (src/db/prepared.ts)
 * and a careful server's would be.
 */
export function namedStatementPool(prefix: string) {
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.DATABASE_POOL_SIZE ?? 20),
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  const names = new Map<string, string>();
  const query = (text: string, values: unknown[]) => {
    let name = names.get(text);
    if (name === undefined) names.set(text, (name = `${prefix}_${names.size + 1}`));
    return pool.query({ name, text, values });
  };
  return { pool, query };
}

/** The create/update body, or null when it is invalid. */
function settings(body: Row): Settings | null {
  const name = typeof body.name === 'string' ? body.name.trim() : '';
  const duration = body.meeting_duration;
  const scheduledAt = typeof body.scheduled_at === 'string' ? new Date(body.scheduled_at) : new Date(NaN);
  if (!name || name.length > 255 || !Number.isInteger(duration) || duration < 1 || duration > 1440 || Number.isNaN(scheduledAt.getTime())) return null;
  const flag = (value: unknown) => (typeof value === 'boolean' ? value : true);
  const text = (value: unknown) => (typeof value === 'string' && value.trim() ? value.trim() : null);
  return {
    name,
    meeting_duration: duration,
    scheduled_at: scheduledAt,
    return_url: text(body.return_url),
    host_return_url: text(body.host_return_url),
    host_display_name: text(body.host_display_name),
    guest_display_name: text(body.guest_display_name),
    enable_chat: flag(body.enable_chat),
    enable_screenshare: flag(body.enable_screenshare),
    enable_invites: flag(body.enable_invites),
    enable_audio_indicator: flag(body.enable_audio_indicator),
  };
}

export const scheduledEnd = (s: Settings) => new Date(s.scheduled_at.getTime() + s.meeting_duration * 60_000);

/**
 * A room row as Parley answers it, by Parley's own presenter: a baseline's
 * answer cannot drift from the product's fields (test/bench/baseline-answers.test.ts).
 * The arrays (participants, waiting, additional) are columns the caller's
 * statement may add; absent, they are empty.
 */
export function present(row: Row, showAdditional: boolean, publicUrl: string) {
  return presentRoom(
    {
      row: row as RoomView['row'],
      currentParticipants: row.participants ?? [],
      waitingParticipants: row.waiting ?? [],
      additionalTokens: row.additional ?? [],
      showAdditionalTokens: showAdditional,
    },
    publicUrl,
  );
}

/** What one server does with the database; P is what its token lookup found. */
export interface RoomHandlers<P> {
  /** The caller of a `Bearer prl_…` token, or null (401). */
  authenticate(token: string): Promise<P | null>;
  get(principal: P, token: string): Promise<Answer>;
  create(principal: P, s: Settings): Promise<Answer>;
  update(principal: P, token: string, s: Settings): Promise<Answer>;
  /** GET /api/rooms?page=N (20 a page), when the server has the list. */
  list?(principal: P, page: number, res: http.ServerResponse): Promise<Answer>;
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

async function route<P>(handlers: RoomHandlers<P>, req: http.IncomingMessage, res: http.ServerResponse): Promise<Answer> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/healthz') return [200, { status: 'ok' }];
  const bearer = /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const principal = bearer && API_TOKEN.test(bearer) ? await handlers.authenticate(bearer) : null;
  if (!principal) return [401, { error: 'Missing or invalid API token' }];
  const match = /^\/api\/rooms(?:\/([^/]+))?$/.exec(url.pathname);
  if (!match) return [404, { error: 'Not found' }];
  const token = match[1];
  if (token !== undefined && !ROOM_TOKEN.test(token)) return [404, { error: 'Room not found' }];
  if (req.method === 'GET' && token === undefined && handlers.list) {
    const page = Number(url.searchParams.get('page') ?? 1);
    if (!Number.isInteger(page) || page < 1) return [400, [{ attribute: 'page', type: 'invalid', message: 'is invalid' }]];
    return handlers.list(principal, page, res);
  }
  if (req.method === 'GET' && token !== undefined) return handlers.get(principal, token);
  if (req.method === 'POST' || req.method === 'PUT') {
    let body: Row;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return [400, [{ attribute: 'body', type: 'invalid', message: 'is not valid JSON' }]];
    }
    const s = body && typeof body === 'object' ? settings(body) : null;
    if (!s) return [400, [{ attribute: 'body', type: 'invalid', message: 'is invalid' }]];
    if (req.method === 'POST' && token === undefined) return handlers.create(principal, s);
    if (req.method === 'PUT' && token !== undefined) return handlers.update(principal, token, s);
  }
  return [404, { error: 'Not found' }];
}

/** Listens on 127.0.0.1:PORT; SIGTERM closes the server, then `close` (the pool), then exits. */
export function serveRooms<P>(handlers: RoomHandlers<P>, name: string, close: () => Promise<void>): void {
  const server = http.createServer((req, res) => {
    route(handlers, req, res).then(
      ([status, body]) => {
        const json = JSON.stringify(body);
        res.statusCode = status;
        res.setHeader('content-type', 'application/json; charset=utf-8');
        // A length instead of chunked encoding, as Fastify sends: one write, no trailing chunk.
        res.setHeader('content-length', Buffer.byteLength(json));
        res.end(json);
      },
      (error: unknown) => {
        process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
        res.statusCode = 500;
        res.end('{"error":"internal"}');
      },
    );
  });
  server.listen(Number(process.env.PORT ?? 3100), '127.0.0.1');
  process.on('SIGTERM', () => server.close(() => void close().then(() => process.exit(0))));
}

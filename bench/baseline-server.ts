// The baseline of the API benchmarks: the practical limit of Node and
// PostgreSQL on this machine for Parley's room endpoints. A bare node:http
// server and a pg Pool (same size as Parley's), no framework, no query
// builder, no logging. Per request it does the same authentication lookup as
// Parley (SHA-256 of the bearer token, api_tokens joined to tenants through the
// unique index, constant-time comparison) and then ONE statement that fetches
// or writes the room together with what its representation needs (connected
// participants, additional guest tokens, the additional_participants toggle):
// the fewest round trips a careful hand-written server would make. Statements
// are named (prepared once per connection), as a careful server's would be. The list
// reads Total-Count from room_counts like Parley. Responses have the same
// fields as Parley's (JSON.stringify). Validation is a few hand-written checks.
//
// Env: PORT, DATABASE_URL, DATABASE_POOL_SIZE, PUBLIC_URL. Only for benchmarks:
// it implements the four measured endpoints for an Instance token, nothing more.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import pg from 'pg';

const INT8 = 20;
const pool = new pg.Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.DATABASE_POOL_SIZE ?? 20),
  types: {
    getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
      oid === INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
  },
});
// Every statement a named one: PostgreSQL parses and plans it once per
// connection, as Parley's hot statements (src/db/prepared.ts).
const statementNames = new Map<string, string>();
function query(text: string, values: unknown[]) {
  let name = statementNames.get(text);
  if (name === undefined) statementNames.set(text, (name = `baseline_${statementNames.size + 1}`));
  return pool.query({ name, text, values });
}
const publicUrl = process.env.PUBLIC_URL ?? 'http://localhost:3000';
const WHOLE_TENANT = '00000000-0000-0000-0000-000000000000';
const API_TOKEN = /^prl_[A-Za-z0-9_-]{43}$/;
const ROOM_TOKEN = /^[A-Za-z0-9_-]{16,64}$/;

interface Principal {
  tenantId: string;
  organizationId: string | null;
  returnUrl: string;
}

async function authenticate(header: string | undefined): Promise<Principal | null> {
  const token = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '')?.[1];
  if (!token || !API_TOKEN.test(token)) return null;
  const digest = createHash('sha256').update(token, 'utf8').digest();
  const { rows } = await query(
    `select t.id, t.token_hash, t.tenant_id, t.organization_id, t.revoked_at, tn.timezone, tn.default_return_url
       from api_tokens t join tenants tn on tn.id = t.tenant_id where t.token_hash = $1`,
    [digest],
  );
  const row = rows[0];
  if (!row || row.revoked_at !== null || !timingSafeEqual(row.token_hash, digest)) return null;
  return { tenantId: row.tenant_id, organizationId: row.organization_id, returnUrl: row.default_return_url };
}

// What a room's representation needs beside its row, as columns of the same statement.
const EXTRAS = `
  array(select p.token from participants p where p.room_id = r.id and p.left_at is null and p.admission = 'admitted' order by p.joined_at) as participants,
  array(select p.token from participants p where p.room_id = r.id and p.left_at is null and p.admission = 'waiting' order by p.joined_at) as waiting,
  array(select g.token from room_guest_tokens g where g.room_id = r.id and g.kind = 'additional' order by g.created_at, g.token) as additional`;
const SHOW_ADDITIONAL = (tenant: string, org: string) => `coalesce(
  (select enabled from organization_features where organization_id = ${org} and feature = 'additional_participants'),
  (select enabled from tenant_features where tenant_id = ${tenant} and feature = 'additional_participants'), false) as show_additional`;

type Row = Record<string, any>;

function present(row: Row, showAdditional: boolean) {
  const join = (token: string) => `${publicUrl}/join/${token}`;
  const additional: string[] = row.additional ?? [];
  return {
    name: row.name,
    token: row.token,
    status: row.status,
    access_token: row.access_token,
    guest_token: row.guest_token,
    host_join_url: join(row.access_token),
    guest_join_url: join(row.guest_token),
    host_display_name: row.host_display_name,
    guest_display_name: row.guest_display_name,
    enable_chat: row.enable_chat,
    enable_screenshare: row.enable_screenshare,
    enable_invites: row.enable_invites,
    enable_audio_indicator: row.enable_audio_indicator,
    enable_waiting_room: row.enable_waiting_room,
    locale: row.locale ?? undefined,
    current_participants: row.participants ?? [],
    waiting_participants: row.waiting ?? [],
    expected_guest_count: 1 + additional.length,
    scheduled_at: row.scheduled_at.toISOString(),
    meeting_duration: row.meeting_duration,
    return_url: row.return_url,
    host_return_url: row.host_return_url ?? undefined,
    permanent: row.permanent,
    doctor_id: row.doctor_id ?? undefined,
    additional_access_tokens: showAdditional ? additional.map((token) => ({ token, join_url: join(token) })) : undefined,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    started_at: row.started_at?.toISOString(),
    ended_at: row.ended_at?.toISOString(),
    closed_at: row.closed_at?.toISOString(),
  };
}

interface Settings {
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

/** The create/update body, or null when it is invalid (the benchmark sends valid bodies only). */
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

const scheduledEnd = (s: Settings) => new Date(s.scheduled_at.getTime() + s.meeting_duration * 60_000);

async function getRoom(principal: Principal, token: string): Promise<[number, unknown]> {
  const { rows } = await query(
    `select r.*, ${EXTRAS}, ${SHOW_ADDITIONAL('$1', '$3')}
       from rooms r where r.tenant_id = $1 and r.token = $2 and ($3::uuid is null or r.organization_id = $3)`,
    [principal.tenantId, token, principal.organizationId],
  );
  return rows[0] ? [200, present(rows[0], rows[0].show_additional)] : [404, { error: 'Room not found' }];
}

async function createRoom(principal: Principal, s: Settings): Promise<[number, unknown]> {
  const now = new Date();
  const end = scheduledEnd(s);
  const { rows } = await query(
    `with r as (
       insert into rooms (tenant_id, organization_id, doctor_id, token, access_token, guest_token, name, status,
         host_display_name, guest_display_name, enable_chat, enable_screenshare, enable_invites, enable_audio_indicator,
         scheduled_at, meeting_duration, return_url, host_return_url, permanent, created_at, updated_at, cleanup_base_at)
       values ($1, $2, null, $3, $4, $5, $6, 'active', $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, false, $17, $17, $18)
       returning *)
     select r.*, ${SHOW_ADDITIONAL('$1', '$2')} from r`,
    [
      principal.tenantId, principal.organizationId, randomBytes(16).toString('base64url'), randomBytes(32).toString('base64url'),
      randomBytes(32).toString('base64url'), s.name, s.host_display_name, s.guest_display_name, s.enable_chat, s.enable_screenshare,
      s.enable_invites, s.enable_audio_indicator, s.scheduled_at, s.meeting_duration, s.return_url ?? principal.returnUrl,
      s.host_return_url, now, end > now ? end : now,
    ],
  );
  return [201, present(rows[0]!, rows[0]!.show_additional)];
}

async function updateRoom(principal: Principal, token: string, s: Settings): Promise<[number, unknown]> {
  const { rows } = await query(
    `with r as (
       update rooms set name = $4, meeting_duration = $5, scheduled_at = $6, return_url = $7, host_return_url = $8,
         host_display_name = $9, guest_display_name = $10, enable_chat = $11, enable_screenshare = $12, enable_invites = $13,
         enable_audio_indicator = $14, permanent = false, updated_at = $15, cleanup_base_at = greatest($16, cleanup_base_at)
       where tenant_id = $1 and token = $2 and ($3::uuid is null or organization_id = $3)
       returning *)
     select r.*, ${EXTRAS}, ${SHOW_ADDITIONAL('$1', '$3')} from r`,
    [
      principal.tenantId, token, principal.organizationId, s.name, s.meeting_duration, s.scheduled_at, s.return_url ?? principal.returnUrl,
      s.host_return_url, s.host_display_name, s.guest_display_name, s.enable_chat, s.enable_screenshare, s.enable_invites,
      s.enable_audio_indicator, new Date(), scheduledEnd(s),
    ],
  );
  return rows[0] ? [200, present(rows[0], rows[0].show_additional)] : [404, { error: 'Room not found' }];
}

async function listRooms(principal: Principal, page: number, perPage: number, res: http.ServerResponse): Promise<[number, unknown]> {
  const org = principal.organizationId;
  const [counted, listed] = await Promise.all([
    query(`select (select sum(count) from room_counts where tenant_id = $1 and organization_id = $2) as total, ${SHOW_ADDITIONAL('$1', '$3')}`, [
      principal.tenantId, org ?? WHOLE_TENANT, org,
    ]),
    query(
      `select r.*, ${EXTRAS} from rooms r where r.tenant_id = $1 and ($2::uuid is null or r.organization_id = $2) order by r.id limit $3 offset $4`,
      [principal.tenantId, org, perPage, (page - 1) * perPage],
    ),
  ]);
  const total = Number(counted.rows[0].total ?? 0);
  const pages = Math.max(1, Math.ceil(total / perPage));
  const last = listed.rows[listed.rows.length - 1];
  const link = (rel: string, n: number, cursor?: string) =>
    `<${publicUrl}/api/rooms?page=${n}${cursor ? `&cursor=${cursor}` : ''}>; rel="${rel}"`;
  const links = [link('first', 1)];
  if (page < pages && last) links.push(link('next', page + 1, `after%3A${last.id}`));
  links.push(link('last', pages, pages > 1 ? 'last' : undefined));
  res.setHeader('Current-Page', String(page));
  res.setHeader('Page-Limit', String(perPage));
  res.setHeader('Total-Pages', String(pages));
  res.setHeader('Total-Count', String(total));
  res.setHeader('Link', links.join(', '));
  return [200, { rooms: listed.rows.map((row) => present(row, counted.rows[0].show_additional)) }];
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

async function route(req: http.IncomingMessage, res: http.ServerResponse): Promise<[number, unknown]> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  if (url.pathname === '/healthz') return [200, { status: 'ok' }];
  const principal = await authenticate(req.headers.authorization);
  if (!principal) return [401, { error: 'Missing or invalid API token' }];
  const match = /^\/api\/rooms(?:\/([^/]+))?$/.exec(url.pathname);
  if (!match) return [404, { error: 'Not found' }];
  const token = match[1];
  if (token !== undefined && !ROOM_TOKEN.test(token)) return [404, { error: 'Room not found' }];
  if (req.method === 'GET' && token === undefined) {
    const page = Number(url.searchParams.get('page') ?? 1);
    if (!Number.isInteger(page) || page < 1) return [400, [{ attribute: 'page', type: 'invalid', message: 'is invalid' }]];
    return listRooms(principal, page, 20, res);
  }
  if (req.method === 'GET') return getRoom(principal, token!);
  if (req.method === 'POST' || req.method === 'PUT') {
    let body: Row;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return [400, [{ attribute: 'body', type: 'invalid', message: 'is not valid JSON' }]];
    }
    const s = body && typeof body === 'object' ? settings(body) : null;
    if (!s) return [400, [{ attribute: 'body', type: 'invalid', message: 'is invalid' }]];
    if (req.method === 'POST' && token === undefined) return createRoom(principal, s);
    if (req.method === 'PUT' && token !== undefined) return updateRoom(principal, token, s);
  }
  return [404, { error: 'Not found' }];
}

const server = http.createServer((req, res) => {
  route(req, res).then(
    ([status, body]) => {
      const json = JSON.stringify(body);
      res.statusCode = status;
      res.setHeader('content-type', 'application/json; charset=utf-8');
      // A length instead of chunked encoding, as Fastify sends: one write, no trailing chunk.
      res.setHeader('content-length', Buffer.byteLength(json));
      res.end(json);
    },
    (error: unknown) => {
      process.stderr.write(`baseline: ${error instanceof Error ? error.message : String(error)}\n`);
      res.statusCode = 500;
      res.end('{"error":"internal"}');
    },
  );
});
server.listen(Number(process.env.PORT ?? 3100), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => void pool.end().then(() => process.exit(0))));

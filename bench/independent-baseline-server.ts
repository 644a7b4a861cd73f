// The independent baseline of the API benchmark (issue 15): the simplest
// correct server for the measured requests (GET, POST and PUT room), on a
// schema of its own instead of Parley's. baseline-server.ts runs Parley's
// statements on Parley's schema, so it shows what the Node side costs but not
// what the schema does (its triggers, counters, extra indexes and columns);
// this one shows the limit a new user would compare with: a token lookup by
// its SHA-256 digest through a unique index, then one plain statement on a
// rooms table with unique indexes, no triggers and no counters.
//
// It creates its tables at start (in the database of DATABASE_URL, its own
// database of the benchmark's cluster) and the one tenant whose token is
// BENCH_API_TOKEN. Durable or not is the cluster's setting (--durable turns
// fsync and synchronous_commit on for every database). Rooms have no calls
// here, so their participant lists are always empty; otherwise the answers
// are Parley's, made by its presenter (support/room-server.ts) and checked
// against its response schema (test/bench/baseline-answers.test.ts).
//
// Env: PORT, DATABASE_URL, DATABASE_POOL_SIZE, PUBLIC_URL, BENCH_API_TOKEN.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { API_TOKEN, namedStatementPool, present, serveRooms, type Answer, type Settings } from './support/room-server.js';

const SCHEMA = `
  create table if not exists tenants (
    id uuid primary key,
    default_return_url text not null
  );
  create table if not exists api_tokens (
    token_hash bytea primary key,
    tenant_id uuid not null references tenants (id),
    revoked_at timestamptz
  );
  create table if not exists rooms (
    id bigint generated always as identity primary key,
    tenant_id uuid not null references tenants (id),
    token text not null unique,
    access_token text not null unique,
    guest_token text not null unique,
    name text not null,
    status text not null,
    host_display_name text,
    guest_display_name text,
    enable_chat boolean not null,
    enable_screenshare boolean not null,
    enable_invites boolean not null,
    enable_audio_indicator boolean not null,
    enable_waiting_room boolean not null default false,
    scheduled_at timestamptz not null,
    meeting_duration integer not null,
    return_url text not null,
    host_return_url text,
    permanent boolean not null default false,
    enable_recording boolean not null default false,
    created_at timestamptz not null,
    updated_at timestamptz not null
  );`;

const { pool, query } = namedStatementPool('independent');
const publicUrl = process.env.PUBLIC_URL ?? 'http://localhost:3000';
const digest = (token: string) => createHash('sha256').update(token, 'utf8').digest();

interface Principal {
  tenantId: string;
  returnUrl: string;
}

async function setUp(token: string): Promise<void> {
  if (!API_TOKEN.test(token)) throw new Error('BENCH_API_TOKEN must look like prl_ and 43 characters');
  await pool.query(SCHEMA);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const taken = await client.query('select 1 from api_tokens where token_hash = $1', [digest(token)]);
    if (taken.rowCount === 0) {
      const tenantId = randomUUID();
      await client.query(`insert into tenants (id, default_return_url) values ($1, 'https://example.org/after')`, [tenantId]);
      await client.query('insert into api_tokens (token_hash, tenant_id) values ($1, $2)', [digest(token), tenantId]);
    }
    await client.query('commit');
  } finally {
    client.release();
  }
}

async function authenticate(token: string): Promise<Principal | null> {
  const { rows } = await query(
    'select a.tenant_id, t.default_return_url from api_tokens a join tenants t on t.id = a.tenant_id where a.token_hash = $1 and a.revoked_at is null',
    [digest(token)],
  );
  return rows[0] ? { tenantId: rows[0].tenant_id, returnUrl: rows[0].default_return_url } : null;
}

const notFound: Answer = [404, { error: 'Room not found' }];

async function getRoom(principal: Principal, token: string): Promise<Answer> {
  const { rows } = await query('select * from rooms where token = $1 and tenant_id = $2', [token, principal.tenantId]);
  return rows[0] ? [200, present(rows[0], false, publicUrl)] : notFound;
}

async function createRoom(principal: Principal, s: Settings): Promise<Answer> {
  const now = new Date();
  const { rows } = await query(
    `insert into rooms (tenant_id, token, access_token, guest_token, name, status, host_display_name, guest_display_name,
       enable_chat, enable_screenshare, enable_invites, enable_audio_indicator, scheduled_at, meeting_duration,
       return_url, host_return_url, created_at, updated_at)
     values ($1, $2, $3, $4, $5, 'active', $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)
     returning *`,
    [
      principal.tenantId, randomBytes(16).toString('base64url'), randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url'),
      s.name, s.host_display_name, s.guest_display_name, s.enable_chat, s.enable_screenshare, s.enable_invites, s.enable_audio_indicator,
      s.scheduled_at, s.meeting_duration, s.return_url ?? principal.returnUrl, s.host_return_url, now,
    ],
  );
  return [201, present(rows[0]!, false, publicUrl)];
}

async function updateRoom(principal: Principal, token: string, s: Settings): Promise<Answer> {
  const { rows } = await query(
    `update rooms set name = $3, meeting_duration = $4, scheduled_at = $5, return_url = $6, host_return_url = $7,
       host_display_name = $8, guest_display_name = $9, enable_chat = $10, enable_screenshare = $11, enable_invites = $12,
       enable_audio_indicator = $13, permanent = false, updated_at = $14
     where token = $1 and tenant_id = $2
     returning *`,
    [
      token, principal.tenantId, s.name, s.meeting_duration, s.scheduled_at, s.return_url ?? principal.returnUrl, s.host_return_url,
      s.host_display_name, s.guest_display_name, s.enable_chat, s.enable_screenshare, s.enable_invites, s.enable_audio_indicator, new Date(),
    ],
  );
  return rows[0] ? [200, present(rows[0], false, publicUrl)] : notFound;
}

await setUp(process.env.BENCH_API_TOKEN ?? '');
serveRooms<Principal>({ authenticate, get: getRoom, create: createRoom, update: updateRoom }, 'independent', () => pool.end());

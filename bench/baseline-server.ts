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
// reads Total-Count from room_counts like Parley. The HTTP side (routing, body
// checks, the room's JSON) is support/room-server.ts, shared with
// independent-baseline-server.ts.
//
// Env: PORT, DATABASE_URL, DATABASE_POOL_SIZE, PUBLIC_URL. Only for benchmarks:
// it implements the four measured endpoints for an Instance token, nothing more.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { namedStatementPool, present, scheduledEnd, serveRooms, type Answer, type Settings } from './support/room-server.js';

const { pool, query } = namedStatementPool('baseline');
const publicUrl = process.env.PUBLIC_URL ?? 'http://localhost:3000';
const WHOLE_TENANT = '00000000-0000-0000-0000-000000000000';

interface Principal {
  tenantId: string;
  organizationId: string | null;
  returnUrl: string;
}

async function authenticate(token: string): Promise<Principal | null> {
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

async function getRoom(principal: Principal, token: string): Promise<Answer> {
  const { rows } = await query(
    `select r.*, ${EXTRAS}, ${SHOW_ADDITIONAL('$1', '$3')}
       from rooms r where r.tenant_id = $1 and r.token = $2 and ($3::uuid is null or r.organization_id = $3)`,
    [principal.tenantId, token, principal.organizationId],
  );
  return rows[0] ? [200, present(rows[0], rows[0].show_additional, publicUrl)] : [404, { error: 'Room not found' }];
}

async function createRoom(principal: Principal, s: Settings): Promise<Answer> {
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
  return [201, present(rows[0]!, rows[0]!.show_additional, publicUrl)];
}

async function updateRoom(principal: Principal, token: string, s: Settings): Promise<Answer> {
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
  return rows[0] ? [200, present(rows[0], rows[0].show_additional, publicUrl)] : [404, { error: 'Room not found' }];
}

async function listRooms(principal: Principal, page: number, res: http.ServerResponse): Promise<Answer> {
  const perPage = 20;
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
  return [200, { rooms: listed.rows.map((row) => present(row, counted.rows[0].show_additional, publicUrl)) }];
}

serveRooms<Principal>({ authenticate, get: getRoom, create: createRoom, update: updateRoom, list: listRooms }, 'baseline', () => pool.end());

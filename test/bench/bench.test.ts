// Keeps the benchmarks from rotting (they are not part of npm test): the API
// benchmark runs end to end at a tiny size (its own PostgreSQL, Parley from
// dist/, the two node:http baselines, the autocannon worker), as does its
// sustained run, and the scale data generators leave counts that agree with
// the rows; the ICE gathering one runs once in headless Chromium. PostgreSQL
// set only: most are about PostgreSQL, and once is enough. Each at the least
// size that still runs its whole path (one repetition, one second, no warm-up,
// the load's slack 1 s): their figures are not read here, and this file was the
// api set's slowest (test/README.md, "Where the time goes").
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { generateFeedback, generateRooms } from '../../bench/support/generate.js';
import { openPostgres } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { createPostgresDatabase, testDb } from '../helpers/database.js';

const root = path.resolve(import.meta.dirname, '../..');
const execFileP = promisify(execFile);

const OUTBOX_VARIANTS = ['triggers off (before webhooks)', 'no endpoint', 'an endpoint for every event'];
/** A variant's row of the outbox benchmark: per operation, wall and CPU ms per operation, each with its change against the triggers off. */
const outboxRow = (variant: string, operations: number) =>
  new RegExp(`^\\| ${variant.replace(/[()]/g, '\\$&')}( \\| \\d+\\.\\d{3} \\| [+-]\\d+\\.\\d %){${operations * 2}} \\|$`, 'm');

describe.runIf(testDb === 'postgres')('benchmarks', () => {
  it('the ICE gathering benchmark reports, for an idle page, a busy one and a busy one with a candidate pool, when gathering began and the first candidate came', { timeout: 180_000 }, async () => {
    // Generous limits (a Chromium page and a run take seconds): only a hung benchmark reaches them.
    const { stdout } = await execFileP(process.execPath, ['--import', 'tsx', 'bench/ice-gathering-busy-page.bench.ts', '--runs=1'], { cwd: root, timeout: 170_000 });
    const rows = stdout.split('\n').filter((line) => /^\| (idle|busy|busy-pool) \|/.test(line));
    expect(rows.map((row) => row.split('|')[1]!.trim())).toEqual(['idle', 'busy', 'busy-pool']);
    // Each cell: the median, then every run's figure in brackets (one run here).
    for (const row of rows) for (const cell of row.split('|').slice(2, 4)) expect(cell.trim()).toMatch(/^(\d+) \(\1\)$/);
  });

  // Three servers and three endpoints: over a minute on a busy machine.
  it('the API benchmark runs and reports Parley against both baselines', { timeout: 240_000 }, async () => {
    expect(fs.existsSync(path.join(root, 'dist/src/main.js')), 'dist/src/main.js: run `npm run build`').toBe(true);
    const { stdout } = await execFileP(
      process.execPath,
      ['--import', 'tsx', 'bench/api.bench.ts', '--seconds=1', '--reps=1', '--connections=2', '--rooms=3', '--only=rooms/,POST', '--warm-up=0'],
      { cwd: root, timeout: 230_000 },
    );
    expect(stdout).toContain('| req/s ÷ baseline | p99 ÷ baseline | req/s ÷ independent | p99 ÷ independent |');
    for (const endpoint of ['GET /api/rooms/{token}', 'POST /api/rooms', 'PUT /api/rooms/{token}']) {
      // One table row per server: endpoint | conns | server | req/s | ... ; every request answered 2xx (else the run fails).
      const rows = stdout.split('\n').filter((line) => line.startsWith(`| ${endpoint} | 2 |`));
      expect(rows.map((row) => row.split('|')[3]!.trim()), endpoint).toEqual(['baseline', 'independent', 'parley-pg']);
      for (const row of rows) expect(Number(row.split('|')[4])).toBeGreaterThan(0);
    }
  });

  it('the API benchmark runs a sustained create run, windows alternating between Parley and the independent baseline, with more tenants', { timeout: 120_000 }, async () => {
    const { stdout, stderr } = await execFileP(
      process.execPath,
      ['--import', 'tsx', 'bench/api.bench.ts', '--sustained=2', '--window=1', '--connections=2', '--rooms=3', '--only=POST', '--targets=parley-pg,independent', '--tenants=3', '--warm-up=0'],
      { cwd: root, timeout: 110_000 },
    );
    expect(stdout).toContain('### Sustained POST /api/rooms, 2 connections, 2 s per target in 1 s windows');
    expect(stderr).toContain('parley-pg: creating 2 other tenants');
    // server | windows | first minute req/s | last minute req/s | last ÷ first | ...
    const rows = stdout.split('\n').filter((line) => /^\| (independent|parley-pg) \| 2 \|/.test(line));
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(Number(row.split('|')[3])).toBeGreaterThan(0);
  });

  it('the outbox benchmark compares its three variants on join + leave, POST room and PUT room', { timeout: 120_000 }, async () => {
    const { stdout } = await execFileP(process.execPath, ['--import', 'tsx', 'bench/outbox-cost.bench.ts', '--db=pglite', '--blocks=1', '--per-block=3'], {
      cwd: root,
      timeout: 110_000,
    });
    // join + leave, POST room, PUT room.
    for (const variant of OUTBOX_VARIANTS) expect(stdout).toMatch(outboxRow(variant, 3));
  });

  it('the outbox benchmark compares its three variants on a join + leave over a real WebSocket', { timeout: 120_000 }, async () => {
    const { stdout } = await execFileP(
      process.execPath,
      ['--import', 'tsx', 'bench/outbox-cost.bench.ts', '--db=pglite', '--path=ws', '--blocks=1', '--per-block=2'],
      { cwd: root, timeout: 110_000 },
    );
    expect(stdout).toContain('| variant | join + leave over WebSocket, ms | against before | CPU ms | against before |');
    for (const variant of OUTBOX_VARIANTS) expect(stdout).toMatch(outboxRow(variant, 1));
  });

  it('the webhook delivery benchmark reports latency and rate', { timeout: 120_000 }, async () => {
    const { stdout } = await execFileP(process.execPath, ['--import', 'tsx', 'bench/webhook-delivery.bench.ts', '--latency-events=1', '--burst=20'], {
      cwd: root,
      timeout: 110_000,
    });
    expect(stdout).toMatch(/^\| event to delivery, p50 \(1 events one at a time\) \| \d+ ms \|$/m);
    expect(stdout).toMatch(/^\| deliveries per second \(first to last arrival\) \| \d+ \|$/m);
  });

  it('the signaling-under-load benchmark reports relay and /healthz latency alone and under the POST load, on both databases, and its control relay beside each', { timeout: 240_000 }, async () => {
    const { stdout } = await execFileP(
      process.execPath,
      ['--import', 'tsx', 'bench/signaling-under-load.bench.ts', '--reps=1', '--rooms=2', '--seconds=3', '--connections=4', '--relay-rate=5', '--slack=1'],
      { cwd: root, timeout: 230_000 },
    );
    // Each relay is checked against the target's own count of signals (the bench throws otherwise), so the run finishing proves each went through its target.
    const [targetsTable, controlTable] = stdout.split('The control');
    const rowsOf = (table = '') => table.split('\n').filter((line) => /^\| parley-/.test(line)).map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()));
    // server | relay p50 alone | relay p99 alone | relay p50 loaded | relay p99 loaded | ratio | messages loaded | healthz ... | POST req/s | ...
    const rows = rowsOf(targetsTable);
    expect(rows.map((row) => row[0])).toEqual(['parley-pglite', 'parley-pg']);
    for (const row of rows) {
      expect(row.slice(1, 5).map(Number).every((ms) => ms > 0)).toBe(true);
      expect(Number(row[6])).toBeGreaterThan(0);
      expect(Number(row[10])).toBeGreaterThan(0);
    }
    // load on | control p50 alone | p99 alone | p50 loaded | p99 loaded | ratio | target's ratio ÷ control's
    const control = rowsOf(controlTable);
    expect(control.map((row) => row[0])).toEqual(['parley-pglite', 'parley-pg']);
    for (const row of control) expect(row.slice(1).map(Number).every((value) => value > 0)).toBe(true);
  });

  it('the API diagnosis reports CPU per thread, scavenges and old-space allocation sites', { timeout: 120_000 }, async () => {
    const { stdout } = await execFileP(
      process.execPath,
      ['--import', 'tsx', 'bench/diagnose-api.ts', '--method=POST', '--seconds=1', '--connections=2', '--heap-sample', '--warm-up=0'],
      { cwd: root, timeout: 110_000 },
    );
    expect(stdout).toMatch(/^POST at 2 connections, 1 s: [1-9]\d* requests/m);
    // The event loop's thread spent CPU on the requests.
    expect(Number(/^ {2}event loop\s+(\d+)$/m.exec(stdout)?.[1])).toBeGreaterThan(0);
    expect(stdout).toMatch(/^Scavenges: \d+, median pause/m);
    expect(stdout).toContain('Allocation sites of objects collected by major GCs');
  });

  it('the data generators keep room_counts and feedback_daily_counts equal to the rows', async () => {
    const { url, drop } = await createPostgresDatabase();
    const handle = await openPostgres(url, 2);
    const client = new pg.Client({ connectionString: url });
    try {
      await migrate(handle);
      await client.connect();
      const tenant = async (name: string) => {
        const id = crypto.randomUUID();
        await client.query(`insert into tenants values ($1, $2, 'https://example.org', 'UTC', now())`, [id, name]);
        return id;
      };
      const [a, b] = [await tenant('a'), await tenant('b')];
      const org = crypto.randomUUID();
      await client.query(`insert into organizations values ($1, $2, 'Clinic', now())`, [org, a]);
      // One room made through the triggers first: the recount must keep it.
      await client.query(
        `insert into rooms (tenant_id, token, access_token, guest_token, name, status, enable_chat, enable_screenshare, enable_invites,
           enable_audio_indicator, scheduled_at, meeting_duration, return_url, permanent, created_at, updated_at, cleanup_base_at)
         values ($1, 'manual-room-token-1', 'manual-access-token-1', 'manual-guest-token-1', 'x', 'active', true, true, true, true,
           now(), 30, 'https://example.org', false, now(), now(), now())`,
        [a],
      );
      await generateRooms(client, [
        { tenantId: a, organizationId: null, count: 300, from: 0 },
        { tenantId: a, organizationId: org, count: 50, from: 0 },
        { tenantId: b, organizationId: null, count: 120, from: 0 },
      ]);
      await generateRooms(client, [{ tenantId: a, organizationId: null, count: 100, from: 300 }]);
      const rooms = await client.query(
        `select c.tenant_id, c.organization_id, sum(c.count)::text as count,
           (select count(*) from rooms r where r.tenant_id = c.tenant_id
              and (c.organization_id = '00000000-0000-0000-0000-000000000000' or r.organization_id = c.organization_id)) as actual
         from room_counts c group by c.tenant_id, c.organization_id order by sum(c.count)`,
      );
      expect(rooms.rows.map((r) => [r.count, r.actual])).toEqual([
        ['50', '50'],
        ['120', '120'],
        ['451', '451'],
      ]);
      await generateFeedback(client, [
        { tenantId: a, count: 1000, from: 0, firstDay: '2025-01-01', days: 10 },
        { tenantId: b, count: 10, from: 0, firstDay: '2025-01-01', days: 10 },
      ]);
      const feedback = await client.query(
        `select (select sum(count) from feedback_daily_counts where tenant_id = $1) as counted,
                (select count(*) from room_feedbacks where tenant_id = $1) as actual,
                (select count(distinct local_day) from room_feedbacks where tenant_id = $1) as days`,
        [a],
      );
      expect(feedback.rows[0]).toEqual({ counted: '1000', actual: '1000', days: '10' });
    } finally {
      await client.end();
      await handle.close();
      await drop();
    }
  });
});

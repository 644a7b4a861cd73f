import { startBenchPostgres } from './support/postgres.js';
import { startProcess, freePort, ADMIN_TOKEN } from './support/processes.js';
import { runLoad } from './support/load.js';
const which = process.argv[2] ?? 'GET';
const pg = await startBenchPostgres({ durable: false, log: console.error });
const port = await freePort();
const parley = await startProcess({ name: 'prof', args: ['--cpu-prof', '--cpu-prof-dir=/tmp/bx/prof', 'dist/src/main.js'], env: { PORT: String(port), DATABASE_URL: pg.url, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN, RATE_LIMIT_PER_MINUTE: '0', LOG_LEVEL: process.argv[3] ?? 'info' }, port, readyPath: '/readyz' });
const token = /prl_[A-Za-z0-9_-]{43}/.exec(parley.output())![0];
const h = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const paths: string[] = [];
for (let i = 0; i < 200; i++) { const r = await fetch(parley.url + '/api/rooms', { method: 'POST', headers: h, body: JSON.stringify({ name: 'x', meeting_duration: 30, scheduled_at: '2030-01-01T00:00:00Z' }) }); paths.push('/api/rooms/' + ((await r.json()) as any).token); }
const body = JSON.stringify({ name: 'y', meeting_duration: 45, scheduled_at: '2030-01-02T00:00:00Z', enable_chat: false });
const spec = which === 'GET' ? { method: 'GET' as const, paths } : which === 'PUT' ? { method: 'PUT' as const, paths, body } : which === 'POST' ? { method: 'POST' as const, paths: ['/api/rooms'], body } : { method: 'GET' as const, paths: ['/api/rooms?page=1'] };
console.log(await runLoad({ origin: parley.url, token, connections: 10, seconds: 6, maxRequests: 1e6, ...spec }));
await parley.stop(); await pg.stop();

// /readyz answers 503 naming the dependency that is down, so a load balancer
// takes the node out; /healthz (the process) stays 200.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildApp } from '../../src/http/build-app.js';
import { createServices } from '../../src/services.js';
import { openTestDatabase } from '../helpers/database.js';

describe('readiness', () => {
  it('is 503 while a dependency is unreachable and 200 again once it is back', async () => {
    const database = await openTestDatabase();
    let redisUp = false;
    const services = createServices({ database, config: loadConfig({ LOG_LEVEL: 'silent' }) });
    const app = await buildApp({
      services,
      readiness: [{ name: 'redis', check: async () => { if (!redisUp) throw new Error('ECONNREFUSED'); } }],
    });
    try {
      const down = await app.inject({ method: 'GET', url: '/readyz' });
      expect(down.statusCode).toBe(503);
      expect(down.json()).toEqual({ status: 'unavailable', checks: { database: 'ok', redis: 'unavailable' } });
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
      redisUp = true;
      const up = await app.inject({ method: 'GET', url: '/readyz' });
      expect(up.statusCode).toBe(200);
      expect(up.json()).toEqual({ status: 'ok', checks: { database: 'ok', redis: 'ok' } });
    } finally {
      await app.close();
      await database.close();
    }
  });
});

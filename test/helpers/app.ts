// An in-process Parley for integration tests: the real app over a real
// database (see database.ts), with factories that make each test's own data.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import type { Clock } from '../../src/domain/support/clock.js';
import { buildApp } from '../../src/http/build-app.js';
import { createServices, type Services } from '../../src/services.js';
import { openTestDatabase } from './database.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

/** A clock the test moves by hand. */
export function manualClock(start = new Date('2026-03-10T12:00:00Z')): Clock & { set(d: Date): void; advance(ms: number): void } {
  let now = start;
  return {
    now: () => new Date(now),
    set: (d) => (now = d),
    advance: (ms) => (now = new Date(now.getTime() + ms)),
  };
}

export interface TestContext {
  app: FastifyInstance;
  services: Services;
  config: Readonly<Config>;
  /** Every log line the app wrote, for tests that check what logs contain. */
  logs: string[];
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>;
  tenant(options?: { timezone?: string; default_return_url?: string }): Promise<TestTenant>;
  close(): Promise<void>;
}

export interface TestTenant {
  id: string;
  instanceToken: string;
  organization(): Promise<{ id: string; token: string; doctor(): Promise<{ id: string }> }>;
  setFeature(feature: string, enabled: boolean): Promise<void>;
}

export async function createTestContext(
  options: { env?: Record<string, string>; clock?: Clock } = {},
): Promise<TestContext> {
  const database = await openTestDatabase();
  // Recordings a test makes go to a folder of its own, removed on close (not ./data/recordings).
  const recordingsDir = options.env?.RECORDINGS_DIR ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'parley-test-recordings-'));
  const config = loadConfig({
    PUBLIC_URL: 'http://parley.test',
    PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    ...(recordingsDir ? { RECORDINGS_DIR: recordingsDir } : {}),
    ...options.env,
  });
  const services = createServices({ database, config, clock: options.clock });
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const app = await buildApp({ services, logStream });
  await app.ready();

  return {
    app,
    services,
    config,
    logs,
    request({ token, headers, ...rest }) {
      return app.inject({ ...rest, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
    },
    async tenant(tenantOptions = {}) {
      const tenant = await services.tenants.createTenant({ name: `Tenant ${Math.random().toString(36).slice(2, 8)}`, ...tenantOptions });
      const instance = await services.tenants.issueToken(tenant.id, {});
      return {
        id: tenant.id,
        instanceToken: instance.token,
        async organization() {
          const org = await services.tenants.createOrganization(tenant.id, { name: 'Clinic' });
          const token = await services.tenants.issueToken(tenant.id, { organization_id: org.id });
          return {
            id: org.id,
            token: token.token,
            doctor: () => services.tenants.createDoctor(org.id, { name: 'Dr. Who' }),
          };
        },
        async setFeature(feature, enabled) {
          await services.tenants.setTenantFeature(tenant.id, feature, enabled);
        },
      };
    },
    async close() {
      await app.close();
      await database.close();
      if (recordingsDir) fs.rmSync(recordingsDir, { recursive: true, force: true });
    },
  };
}

/** A valid room body; override what a test is about. */
export function roomBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Consultation', meeting_duration: 30, scheduled_at: '2026-03-10T14:00:00Z', ...overrides };
}

// A browser world that records (docs/design.md, "Recording with consent"):
// a Janus the test starts, a server sending its rooms there with a temporary
// RECORDINGS_DIR, and the feature `recording` on for the tests' tenant.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { LocalJanus } from '../../src/local-janus.js';
import { startWorld, type BrowserWorld } from './browser.js';
import { startTestJanus } from './janus.js';

export interface RecordingWorld {
  janus: LocalJanus;
  world: BrowserWorld;
  recordingsDir: string;
  close(): Promise<void>;
}

/** `env`: more settings for its server (`SFU_LOST_ROOM_SECONDS`, ...). */
export async function startRecordingWorld(env: Record<string, string> = {}): Promise<RecordingWorld> {
  const janus = await startTestJanus();
  const recordingsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-recordings-'));
  const world = await startWorld({ SFU: 'janus', JANUS_URLS: janus.url, JANUS_API_SECRET: janus.apiSecret, RECORDINGS_DIR: recordingsDir, ...env });
  const tenant = await world.server.services.database.db.selectFrom('tenants').select('id').where('name', '=', 'Browser tests').executeTakeFirstOrThrow();
  await world.server.services.tenants.setTenantFeature(tenant.id, 'recording', true);
  return {
    janus,
    world,
    recordingsDir,
    async close() {
      await world.close();
      await janus.stop();
      fs.rmSync(recordingsDir, { recursive: true, force: true });
    },
  };
}

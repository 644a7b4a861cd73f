// `npm start` with SFU=janus and no JANUS_URLS (docs/design.md, "Group calls
// through an SFU"): the node starts a Janus of its own, `parley admin sfu
// list` shows it, a Janus killed with -9 is started again at the same
// address, and stopping the node stops it. A real server process (dist/) and
// a real Janus. A node killed with -9 leaves no Janus behind (the wrapper's
// watcher sees the node's pipe close), and a stale Janus an earlier crash left
// on the same ports does not stop a start.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { janusInstalled } from '../../src/config.js';
import { janusAnswers } from '../../src/sfu/janus-client.js';
import { ADMIN_TOKEN, serverDatabase, startServerProcess, stopServerProcess, waitForExit, type ServerProcess } from '../helpers/server-process.js';
import { eventually } from '../helpers/wait.js';
import { startOperatorJanus, type OperatorJanus } from '../helpers/janus.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/parley.js');

interface SfuView {
  sfu: string;
  instances: { url: string; configured: boolean; answers: boolean; rooms: number }[];
}

let server: ServerProcess;
let database: Awaited<ReturnType<typeof serverDatabase>>;

const view = async (): Promise<SfuView> => (await fetch(`${server.url}/admin/sfu`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json() as Promise<SfuView>;

/** The node's child processes named janus (its own, not anyone else's): from /proc. */
function janusChildren(pid: number): number[] {
  const children = fs
    .readdirSync(`/proc/${pid}/task`)
    .flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  return children.filter((child) => {
    try {
      return fs.readFileSync(`/proc/${child}/comm`, 'utf8').trim() === 'janus';
    } catch {
      return false;
    }
  });
}

beforeAll(async () => {
  if (!janusInstalled()) throw new Error('janus is not installed: apt-get install janus janus-tools (.ci/run installs it)');
  database = await serverDatabase();
  server = await startServerProcess({ ...database.env, SFU: 'janus', JANUS_RTP_PORTS: '42000-42099' });
}, 120_000);

afterAll(async () => {
  await stopServerProcess(server);
  await database?.remove();
});

describe('a node with SFU=janus and no JANUS_URLS', () => {
  let url: string;

  it('runs a Janus of its own, which `parley admin sfu list` shows answering', async () => {
    const seen = await view();
    expect(seen.sfu).toBe('janus');
    expect(seen.instances).toEqual([{ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/janus$/), configured: true, answers: true, rooms: 0 }]);
    url = seen.instances[0]!.url;
    const printed = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, [BIN, 'admin', 'sfu', 'list'], { env: { PATH: process.env.PATH ?? '', PARLEY_URL: server.url, PARLEY_ADMIN_TOKEN: ADMIN_TOKEN } }, (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    );
    expect(JSON.parse(printed)).toEqual(seen);
    // Only Parley may use it: without the secret Janus refuses.
    const refused = await (await fetch(url, { method: 'POST', body: JSON.stringify({ janus: 'create', transaction: 'x' }) })).json();
    expect(refused).toMatchObject({ janus: 'error', error: { code: 403 } });
  });

  it('starts it again at the same address when it dies', async () => {
    const [before] = janusChildren(server.child.pid!);
    expect(before).toBeGreaterThan(0);
    process.kill(before!, 'SIGKILL');
    await eventually(() => janusChildren(server.child.pid!).some((pid) => pid !== before), 20_000, 'a new janus');
    await eventually(() => janusAnswers(url), 20_000, 'the new janus answering');
    expect((await view()).instances[0]).toMatchObject({ url, answers: true });
  }, 60_000);

  it('stops it with the node', async () => {
    const [janus] = janusChildren(server.child.pid!);
    server.child.kill('SIGTERM');
    expect(await waitForExit(server, 20_000)).toMatchObject({ code: 0 });
    expect(fs.existsSync(`/proc/${janus}`)).toBe(false);
    expect(await janusAnswers(url)).toBe(false);
  }, 30_000);
});

describe('a node killed with -9', () => {
  let stale: OperatorJanus | undefined;
  let killed: ServerProcess | undefined;
  afterAll(async () => {
    await stopServerProcess(killed, 'SIGKILL');
    await stale?.stop();
  });

  it('starts beside a stale Janus an earlier crash left on its ports, and leaves no Janus behind when killed', async () => {
    // An earlier crash's Janus, on the RTP ports this node is given (its HTTP port is a fresh one each start).
    stale = await startOperatorJanus({ rtpPorts: { min: 42100, max: 42199 } });
    const own = await serverDatabase();
    try {
      killed = await startServerProcess({ ...own.env, SFU: 'janus', JANUS_RTP_PORTS: '42100-42199' });
      const [janus] = janusChildren(killed.child.pid!);
      expect(janus).toBeGreaterThan(0);
      const url = ((await (await fetch(`${killed.url}/admin/sfu`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as SfuView).instances[0]!.url;
      expect(url).not.toBe(stale.url);
      expect(await janusAnswers(url)).toBe(true);
      killed.child.kill('SIGKILL');
      await waitForExit(killed, 20_000).catch(() => undefined);
      // The wrapper's watcher reads the node's pipe: closed by the kernel with the node, it kills Janus at once.
      await eventually(() => !fs.existsSync(`/proc/${janus}`), 10_000, `janus ${janus} gone with its node`);
      expect(await janusAnswers(url)).toBe(false);
      // The stale one is not the node's to stop.
      expect(await janusAnswers(stale.url)).toBe(true);
    } finally {
      await own.remove();
    }
  }, 120_000);
});

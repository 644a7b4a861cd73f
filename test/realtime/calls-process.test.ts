// The calls process (CALLS_PROCESS=separate, the default; docs/design.md#the-calls-process):
// a real server process (node dist/src/main.js) over the test database, whose
// WebSockets are served by a second process of its own. The call goes through
// it (joins written to the database from there: on PGlite, through the main
// process), the API's room events reach it, GET /metrics carries its counters
// once, and when it dies it is started again and the participants resume.
import fs from 'node:fs';
import os from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { httpJson } from '../helpers/api.js';
import { adminTenantToken, parseLine, serverDatabase, startServerProcess, stopServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { waitFor } from '../helpers/wait.js';
import { Client } from '../helpers/ws-client.js';

const ORIGIN = 'http://parley.test';

interface Started {
  server: ServerProcess;
  api: (method: string, url: string, body?: unknown) => ReturnType<typeof httpJson>;
  connect: () => Promise<Client>;
  stop: () => Promise<void>;
}
/** The servers a test started for itself, stopped after it; the shared one is stopped after the file. */
const ownServers: Started[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.terminate();
  for (const started of ownServers.splice(0)) await started.stop();
});

/** The processes `pid` started. */
function childrenOf(pid: number): number[] {
  return fs.readdirSync(`/proc/${pid}/task`).flatMap((thread) => fs.readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
}

/** The nice value of a thread (its `stat`'s 19th field). */
const niceOf = (stat: string) => Number(fs.readFileSync(stat, 'utf8').replace(/^.*\) /, '').split(' ')[16]);
/** The nice value of each thread of process `pid`. */
const threadNiceValues = (pid: number) => fs.readdirSync(`/proc/${pid}/task`).map((thread) => niceOf(`/proc/${pid}/task/${thread}/stat`));

/** Raising a priority needs CAP_SYS_NICE, which root has: in CI the tests run as root, and the test that needs it must not be skipped. */
const mayRaisePriority = process.getuid?.() === 0;
if (!mayRaisePriority && process.env.CI === 'true') throw new Error('the calls process priority tests need root (CAP_SYS_NICE) (CI=true: never skipped)');

/** A server process on a database of its own, a migrated copy (removed again by stop()). */
async function start(env: Record<string, string> = {}, under: string[] = []): Promise<Started> {
  const database = await serverDatabase({ migrated: true });
  let server: ServerProcess;
  try {
    server = await startServerProcess({ ...database.env, ...env }, { under });
  } catch (error) {
    await database.remove();
    throw error;
  }
  const { token } = await adminTenantToken(server.url);
  const api = (method: string, url: string, body?: unknown) => httpJson(server.url, token, method, url, body);
  const connect = async () => {
    const client = await Client.open(`ws://127.0.0.1:${server.port}/ws`, ORIGIN);
    clients.push(client);
    return client;
  };
  const stop = async () => {
    await stopServerProcess(server);
    await database.remove();
  };
  return { server, api, connect, stop };
}
/** A server of the test's own, stopped after it: for a test that needs other settings, or kills the calls process and counts what follows. */
async function startOwn(env: Record<string, string> = {}, under: string[] = []): Promise<Started> {
  const started = await start(env, under);
  ownServers.push(started);
  return started;
}

const metricLines = async (url: string) => (await (await fetch(`${url}/metrics`)).text()).split('\n');
/** The calls process's presence job's successful runs, as GET /metrics counts them (0 before the first). */
const presenceRuns = async (url: string) =>
  Number((await metricLines(url)).find((line) => line.startsWith('parley_job_runs_total{job="presence",outcome="ok"}'))?.split(' ')[1] ?? 0);

// One server for the tests that leave it serving as they found it (they start no
// other calls and change no setting), in this order: the last one kills its calls
// process. A server start is most of such a test's time (a fresh database, its
// migrations, two processes).
describe('the calls process', () => {
  describe('on one server', () => {
    let shared: Started;
    beforeAll(async () => {
      shared = await start();
    }, 180_000);
    afterAll(() => shared?.stop());

    it('serves the call in a process of its own, hears the API, and owns the signaling metrics', { timeout: 240_000 }, async () => {
      const { server, api, connect } = shared;
      const [calls] = childrenOf(server.child.pid!);
      expect(calls, 'the calls process').toBeDefined();
      expect(fs.readFileSync(`/proc/${calls}/cmdline`, 'utf8')).toContain('calls-main');
      const room = (await api('POST', '/api/rooms', { name: 'Consultation', meeting_duration: 30, scheduled_at: new Date().toISOString() })).json;

      const host = await connect();
      const guest = await connect();
      const h = await host.join(room.access_token, 'Host');
      const g = await guest.join(room.guest_token, 'Guest');
      await host.next('peer-joined');
      host.send({ type: 'signal', to: g.self.id, data: { candidate: null } });
      expect(await guest.next('signal')).toEqual({ type: 'signal', from: h.self.id, data: { candidate: null } });
      // A settings update of the room reaches the call (the calls process said someone is in it).
      const { name, meeting_duration, scheduled_at } = room;
      expect((await api('PUT', `/api/rooms/${room.token}`, { name, meeting_duration, scheduled_at, enable_chat: false })).status).toBe(200);
      expect(await guest.next('settings')).toEqual({ type: 'settings', settings: { chat: false, screenshare: true, invites: true, audioIndicator: true } });
      // The joins reached the database from the calls process.
      const started = (await api('GET', `/api/rooms/${room.token}`)).json;
      expect(started.status).toBe('started');
      expect([...started.current_participants].sort()).toEqual([h.participantToken, g.participantToken].sort());
      // Its log lines come out of the server's own output, marked as its.
      expect(server.output.map(parseLine).filter((line) => line?.msg === 'participant joined' && line.process === 'calls')).toHaveLength(2);

      const metrics = await metricLines(server.url);
      expect(metrics).toContain('parley_node_connections 2');
      expect(metrics.find((line) => line.startsWith('parley_signaling_messages_total{type="signal"}'))).toBe('parley_signaling_messages_total{type="signal"} 1');
      // One family each: the main process leaves the calls process's out of its own.
      const types = metrics.filter((line) => line.startsWith('# TYPE '));
      expect(types.length).toBe(new Set(types).size);
      // Its presence job (every HEARTBEAT_INTERVAL_SECONDS, 2 s) is counted in the main process's job family.
      await waitFor(async () => (await presenceRuns(server.url)) > 0, 30_000, 'a presence run counted');

      // The API's delete reaches the calls.
      expect((await api('DELETE', `/api/rooms/${room.token}`)).status).toBe(204);
      expect(await host.next('room-closed')).toMatchObject({ reason: 'deleted' });
      expect((await guest.closed).code).toBe(4001);
    });

    it('refuses an upgrade from another origin (403) or to another path (404) before it reaches the calls', { timeout: 180_000 }, async () => {
      const { server } = shared;
      await expect(Client.open(`ws://127.0.0.1:${server.port}/ws`, 'http://evil.example')).rejects.toThrow('HTTP 403');
      await expect(Client.open(`ws://127.0.0.1:${server.port}/elsewhere`, ORIGIN)).rejects.toThrow('HTTP 404');
    });

    it.skipIf(!mayRaisePriority)('runs every thread five nice steps ahead of the main process, where the system allows it', { timeout: 180_000 }, async () => {
      const { server } = shared;
      const [calls] = childrenOf(server.child.pid!);
      // The main process's event loop, as started: this runner's value (its embedded database's thread, on PGlite, lowers itself).
      const mainNice = niceOf(`/proc/${server.child.pid}/stat`);
      expect(mainNice).toBe(os.getPriority(0));
      const ahead = Math.max(-20, mainNice - 5);
      expect(new Set(threadNiceValues(calls!))).toEqual(new Set([ahead]));
      expect(server.output.map(parseLine).find((line) => line?.process === 'calls' && line.nice !== undefined)).toMatchObject({
        msg: 'calls process runs ahead of the API',
        nice: ahead,
        mainProcessNice: mainNice,
      });
    });

    it('refuses with 503, not drops, an upgrade handed to a calls process that died before taking it', { timeout: 180_000 }, async () => {
      const { server } = shared;
      const [calls] = childrenOf(server.child.pid!);
      // Stopped, it reads nothing: the upgrade goes into its IPC socket and stays there.
      process.kill(calls!, 'SIGSTOP');
      const upgrade = Client.open(`ws://127.0.0.1:${server.port}/ws`, ORIGIN).then(
        (client) => (client.terminate(), 'opened'),
        (error: Error) => error.message,
      );
      // Time for the upgrade to reach the stopped process's socket (nothing to wait on: it reads nothing). On a
      // stalled machine the kill may come first; the upgrade is then refused with the same 503 as the process is gone.
      await new Promise((resolve) => setTimeout(resolve, 300));
      process.kill(calls!, 'SIGKILL');
      expect(await upgrade).toContain('HTTP 503');
    });
  });

  it('is started again when it dies, refusing upgrades with 503 meanwhile, and the participants resume', { timeout: 240_000 }, async () => {
    const { server, api, connect } = await startOwn();
    const room = (await api('POST', '/api/rooms', { name: 'Consultation', meeting_duration: 30, scheduled_at: new Date().toISOString() })).json;
    const host = await connect();
    const guest = await connect();
    const h = await host.join(room.access_token, 'Host');
    const g = await guest.join(room.guest_token, 'Guest');

    await waitFor(async () => (await presenceRuns(server.url)) > 0, 30_000, 'a presence run counted');
    const runsBefore = await presenceRuns(server.url);
    const [first] = childrenOf(server.child.pid!);
    process.kill(first!, 'SIGKILL');
    // Its sockets went with it: a drop, on which the browser reconnects.
    expect((await host.closed).code).toBe(1006);
    // Until the next one serves (0.25 s at the least), an upgrade is refused with 503, not hung or dropped.
    const refused = await waitFor(
      () => Client.open(`ws://127.0.0.1:${server.port}/ws`, ORIGIN).then((client) => (client.terminate(), null), (error: Error) => error.message),
      5000,
      'an upgrade refused while the calls process is down',
      20,
    );
    expect(refused).toContain('HTTP 503');
    // A new one, serving.
    await waitFor(async () => childrenOf(server.child.pid!)[0] !== first && (await fetch(`${server.url}/readyz`)).status === 200, 60_000, 'a new calls process');
    expect(server.output.map(parseLine).filter((line) => line?.level === 50).map((line) => line!.msg)).toEqual([
      'the calls process ended: its calls are reconnecting; starting it again',
    ]);

    const hostAgain = await connect();
    const guestAgain = await connect();
    const h2 = await hostAgain.join(room.access_token, 'Host', h.participantToken);
    const g2 = await guestAgain.join(room.guest_token, 'Guest', g.participantToken);
    expect([h2.self.id, g2.self.id]).toEqual([h.self.id, g.self.id]);
    hostAgain.send({ type: 'signal', to: g.self.id, data: { candidate: null } });
    expect(await guestAgain.next('signal')).toMatchObject({ from: h.self.id });
    // The main process keeps the count: the new process's runs add to the old one's.
    await waitFor(async () => (await presenceRuns(server.url)) > runsBefore, 30_000, 'presence runs counted on from before the restart');
  });

  it("runs at the main process's priority and says why, where the system does not allow more, and serves the call all the same", { timeout: 180_000 }, async () => {
    // Root without CAP_SYS_NICE (and RLIMIT_NICE at its default, 0) is refused like any other user.
    const { server, api, connect } = await startOwn({}, mayRaisePriority ? ['setpriv', '--bounding-set=-sys_nice', '--'] : []);
    const [calls] = childrenOf(server.child.pid!);
    expect(new Set(threadNiceValues(calls!))).toEqual(new Set([niceOf(`/proc/${server.child.pid}/stat`)]));
    const said = server.output.map(parseLine).find((line) => line?.process === 'calls' && line.nice !== undefined);
    expect(said?.msg).toMatch(/^calls process runs at the API's priority: grant CAP_SYS_NICE/);
    expect(said?.reason).toContain('EACCES');
    const room = (await api('POST', '/api/rooms', { name: 'Consultation', meeting_duration: 30, scheduled_at: new Date().toISOString() })).json;
    const host = await connect();
    const guest = await connect();
    const h = await host.join(room.access_token, 'Host');
    const g = await guest.join(room.guest_token, 'Guest');
    host.send({ type: 'signal', to: g.self.id, data: { candidate: null } });
    expect(await guest.next('signal')).toMatchObject({ from: h.self.id });
  });

  it('CALLS_PROCESS=inline serves the call in the one process', { timeout: 180_000 }, async () => {
    const { server, api, connect } = await startOwn({ CALLS_PROCESS: 'inline' });
    expect(childrenOf(server.child.pid!)).toEqual([]);
    const room = (await api('POST', '/api/rooms', { name: 'Consultation', meeting_duration: 30, scheduled_at: new Date().toISOString() })).json;
    const host = await connect();
    await host.join(room.access_token, 'Host');
    expect(await metricLines(server.url)).toContain('parley_node_connections 1');
  });
});

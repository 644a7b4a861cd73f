// Fresh TURN credentials during the call (ice-renewal.ts): sent every
// renewal period to each participant in the call, to nobody waiting to be let
// in, and to nobody after its connection closed.
import { describe, expect, it } from 'vitest';
import { dispatch } from './dispatch.js';
import { useHubFixture } from './hub.test-support.js';
import { connectionClosed } from './session-handle.js';

const RENEWAL_MS = 40;
let issued = 0;
/** Each call gives new credentials, numbered, for the peer asked for. */
const hub = useHubFixture({
  iceRenewalMs: RENEWAL_MS,
  iceServersFor: (peerId) => [{ urls: 'turn:turn.test:3478', username: `${++issued}:${peerId}`, credential: 'c' }],
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('fresh ICE servers during the call', () => {
  it('go to each participant in the call every period, with credentials of its own made then', async () => {
    const { host, guest } = await hub().hostAndGuest();
    await expect.poll(() => host.connection.all('ice-servers').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
    const [first, second] = host.connection.all('ice-servers');
    const users = [first!, second!].map((m) => m.iceServers[0]!.username!);
    // Made when sent (a later number than the join's), for the host's own peer id.
    for (const user of users) expect(user.split(':')[1]).toBe(host.joined.self.id);
    const joinedAt = Number(host.joined.iceServers[0]!.username!.split(':')[0]);
    expect(Number(users[0]!.split(':')[0])).toBeGreaterThan(joinedAt);
    expect(Number(users[1]!.split(':')[0])).toBeGreaterThan(Number(users[0]!.split(':')[0]));
    await expect.poll(() => guest.connection.all('ice-servers').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    expect(guest.connection.all('ice-servers')[0]!.iceServers[0]!.username).toContain(`:${guest.joined.self.id}`);
  });

  it('stop when the connection closes', async () => {
    const { host } = await hub().hostAndGuest();
    await expect.poll(() => host.connection.all('ice-servers').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    connectionClosed(hub().ctx, host.session);
    const sent = host.connection.all('ice-servers').length;
    await sleep(RENEWAL_MS * 4); // proves that nothing more is sent
    expect(host.connection.all('ice-servers').length).toBe(sent);
    expect(host.session.iceRenewal).toBeNull();
  });

  it('go to nobody waiting to be let in, and start once a host lets them in', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const host = await hub().join(room.access_token, 'Dr Who');
    const guest = await hub().knock(room.guest_token, 'Pat');
    await sleep(RENEWAL_MS * 4); // proves that nothing is sent while waiting
    expect(guest.connection.all('ice-servers')).toEqual([]);
    await dispatch(hub().ctx, host.session, { type: 'admit', requestId: 'a1', peerId: guest.waiting.self.id });
    await hub().settle();
    const admitted = guest.connection.all('admitted')[0]!;
    await expect.poll(() => guest.connection.all('ice-servers').length, { timeout: 15_000 }).toBeGreaterThanOrEqual(1);
    const renewed = guest.connection.all('ice-servers')[0]!.iceServers[0]!.username!;
    expect(renewed).toContain(`:${guest.waiting.self.id}`);
    expect(renewed).not.toBe(admitted.iceServers[0]!.username);
  });
});

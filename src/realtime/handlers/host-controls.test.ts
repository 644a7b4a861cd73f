// The waiting room and the host controls (docs/design.md, "Waiting room") over the real
// participation service: who waits, what they may see and send, and what
// admit, deny and remove do, down to the database and the rooms API.
import { describe, expect, it } from 'vitest';
import { CloseCode } from '../close-codes.js';
import { dispatch } from '../dispatch.js';
import { useHubFixture, type TestSession } from '../hub.test-support.js';
import type { ClientMessage } from '../../shared/protocol.js';
import { connectionClosed } from '../session-handle.js';

const hub = useHubFixture();
let nextId = 0;

/** Dispatches a message; the reply to a request (by its requestId), else the last message sent. */
async function send(who: TestSession, message: ClientMessage) {
  const before = who.connection.sent.length;
  await dispatch(hub().ctx, who.session, message);
  await hub().settle();
  const requestId = 'requestId' in message ? message.requestId : undefined;
  return who.connection.sent.slice(before).find((m) => requestId && 'requestId' in m && m.requestId === requestId) ?? who.connection.sent.at(-1);
}
const admit = (host: TestSession, peerId: string) => send(host, { type: 'admit', requestId: `a${++nextId}`, peerId });
const deny = (host: TestSession, peerId: string) => send(host, { type: 'deny', requestId: `d${++nextId}`, peerId });
const remove = (host: TestSession, peerId: string) => send(host, { type: 'remove', requestId: `r${++nextId}`, peerId });

describe('the waiting room', () => {
  it('keeps a guest out of the call until a host arrives, and lists it to the host on arrival', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const guest = await hub().knock(room.guest_token, 'Pat');
    expect(guest.waiting).toMatchObject({ self: { name: 'Pat', role: 'guest' }, participantToken: expect.any(String) });
    expect(guest.waiting).not.toHaveProperty('peers');
    expect(guest.session.state).toBe('waiting');
    const before = await hub().getRoom(room.token);
    // Waiting is not being in the call: the room has not started.
    expect(before).toMatchObject({ status: 'active', current_participants: [], waiting_participants: [guest.waiting.participantToken] });

    const host = await hub().join(room.access_token, 'Dr Who');
    expect(host.joined.waiting).toEqual([guest.waiting.self]);
    expect(host.joined.peers).toEqual([]);
    // The guest heard nothing of the host's arrival.
    expect(guest.connection.sent.map((m) => m.type)).toEqual(['waiting']);
  });

  it('tells the hosts, and only them, when someone starts waiting', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const host = await hub().join(room.access_token, 'Host');
    const hostTab = await hub().join(room.access_token, 'Host');
    // With hosts in the call, a guest still waits.
    await hub().knock(room.guest_token, 'First');
    const other = await hub().knock(room.guest_token, 'Second');
    await hub().settle();
    for (const tab of [host, hostTab]) {
      expect(tab.connection.all('participant-waiting').map((m) => m.peer.name)).toEqual(['First', 'Second']);
      expect(tab.connection.all('peer-joined')).toHaveLength(tab === host ? 1 : 0);
    }
    expect(other.connection.all('participant-waiting')).toEqual([]);
  });

  it('refuses everything of the call from someone waiting, and relays nothing to it', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const host = await hub().join(room.access_token, 'Host');
    const guest = await hub().knock(room.guest_token, 'Pat');
    const attempts: ClientMessage[] = [
      { type: 'signal', to: host.joined.self.id, data: { candidate: null } },
      { type: 'chat', requestId: 'c', text: 'let me in' },
      { type: 'media-state', audio: true, video: true },
      { type: 'screenshare-start', requestId: 's', streamId: 'x' },
      { type: 'invite-create', requestId: 'i' },
      { type: 'admit', requestId: 'a', peerId: guest.waiting.self.id },
    ];
    for (const message of attempts) expect(await send(guest, message)).toMatchObject({ type: 'error', code: 'not-admitted' });
    // The host got none of it; the host's own messages to the waiting id reach nobody.
    expect(host.connection.sent.filter((m) => !['joined', 'participant-waiting'].includes(m.type))).toEqual([]);
    await send(host, { type: 'signal', to: guest.waiting.self.id, data: { candidate: null } });
    await send(host, { type: 'chat', requestId: 'hc', text: 'hello' });
    expect(guest.connection.sent.map((m) => m.type)).toEqual(['waiting', 'error', 'error', 'error', 'error', 'error', 'error']);
  });

  it('lets a guest in on admit: the guest gets the call, the call gets the guest, every host tab updates its list', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const host = await hub().join(room.access_token, 'Host');
    const hostTab = await hub().join(room.access_token, 'Host');
    const guest = await hub().knock(room.guest_token, 'Pat');
    expect(await admit(host, guest.waiting.self.id)).toMatchObject({ type: 'ack' });
    const [admitted] = guest.connection.all('admitted');
    expect(admitted).toMatchObject({ participantToken: guest.waiting.participantToken, self: guest.waiting.self, waiting: [], resumed: false });
    expect(admitted!.peers.map((p) => p.id).sort()).toEqual([host.joined.self.id, hostTab.joined.self.id].sort());
    expect(guest.session.state).toBe('joined');
    expect(host.connection.all('peer-joined').at(-1)).toEqual({ type: 'peer-joined', peer: guest.waiting.self });
    expect(hostTab.connection.all('waiting-ended')).toEqual([{ type: 'waiting-ended', peerId: guest.waiting.self.id, outcome: 'admitted' }]);
    const api = await hub().getRoom(room.token);
    expect(api.waiting_participants).toEqual([]);
    expect(api.current_participants).toContain(guest.waiting.participantToken);
    // In the call now: chat flows both ways.
    expect(await send(guest, { type: 'chat', requestId: 'c', text: 'hi' })).toMatchObject({ type: 'ack' });
    expect(host.connection.all('chat').at(-1)).toMatchObject({ text: 'hi', name: 'Pat' });
    // Admitting twice (the other tab was slower): a clear refusal, nothing changes.
    expect(await admit(hostTab, guest.waiting.self.id)).toMatchObject({ type: 'error', code: 'not-found' });
  });

  it('turns a guest away on deny: it is told, closed, and its token never comes back', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const host = await hub().join(room.access_token, 'Host');
    const guest = await hub().knock(room.guest_token, 'Pat');
    expect(await deny(host, guest.waiting.self.id)).toMatchObject({ type: 'ack' });
    expect(guest.connection.sent.at(-1)).toEqual({ type: 'denied' });
    expect(guest.connection.closes).toEqual([{ code: CloseCode.denied, reason: 'not let in' }]);
    expect(host.connection.all('peer-joined')).toEqual([]);
    expect((await hub().getRoom(room.token)).waiting_participants).toEqual([]);
    const again = await hub().tryJoin(room.guest_token, 'Pat', guest.waiting.participantToken);
    expect(again.connection.sent).toEqual([expect.objectContaining({ type: 'error', code: 'denied' })]);
  });

  it('removes a guest from the call: it is told and closed, the others see it leave, its token never comes back', async () => {
    const { room, host, guest } = await hub().hostAndGuest();
    expect(await remove(guest, host.joined.self.id)).toMatchObject({ type: 'error', code: 'forbidden' });
    expect(await remove(host, guest.joined.self.id)).toMatchObject({ type: 'ack' });
    expect(guest.connection.sent.at(-1)).toEqual({ type: 'removed' });
    expect(guest.connection.closes).toEqual([{ code: CloseCode.removed, reason: 'removed by the host' }]);
    expect((await hub().getRoom(room.token)).current_participants).toEqual([host.joined.participantToken]);
    // The close that follows is no drop: no second leave.
    connectionClosed(hub().ctx, guest.session);
    await hub().settle();
    const again = await hub().tryJoin(room.guest_token, 'Pat', guest.joined.participantToken);
    expect(again.connection.sent).toEqual([expect.objectContaining({ type: 'error', code: 'removed' })]);
    // A host is never removed, and someone not in the call cannot be.
    const second = await hub().join(room.access_token, 'Host');
    expect(await remove(host, second.joined.self.id)).toMatchObject({ type: 'error', code: 'not-found' });
    expect(await remove(host, guest.joined.self.id)).toMatchObject({ type: 'error', code: 'not-found' });
  });

  it('holds a waiting guest its place across a reconnect, and an admitted one comes back without waiting', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const host = await hub().join(room.access_token, 'Host');
    const first = await hub().knock(room.guest_token, 'First');
    hub().clock.advance(1000);
    const second = await hub().knock(room.guest_token, 'Second');
    connectionClosed(hub().ctx, first.session);
    await hub().settle();
    expect(host.connection.all('waiting-ended').map((m) => m.outcome)).toEqual(['left']);
    const back = await hub().knock(room.guest_token, 'First', first.waiting.participantToken);
    expect(back.waiting.self).toEqual(first.waiting.self);
    expect((await hub().getRoom(room.token)).waiting_participants).toEqual([first.waiting.participantToken, second.waiting.participantToken]);
    expect(host.connection.all('participant-waiting').at(-1)?.peer).toEqual(first.waiting.self);

    await admit(host, second.waiting.self.id);
    connectionClosed(hub().ctx, second.session);
    await hub().settle();
    const returned = await hub().join(room.guest_token, 'Second', second.waiting.participantToken);
    expect(returned.joined).toMatchObject({ resumed: true, self: second.waiting.self });
    expect(returned.joined.peers.map((p) => p.id)).toEqual([host.joined.self.id]);
  });

  it('keeps a decision taken while the guest was away: it resumes into the call', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const host = await hub().join(room.access_token, 'Host');
    const guest = await hub().knock(room.guest_token, 'Pat');
    // Dropped, but within the hold on another node it would still be listed: admit it directly.
    hub().ctx.rooms.leave(guest.session);
    expect(await admit(host, guest.waiting.self.id)).toMatchObject({ type: 'ack' });
    expect(guest.connection.all('admitted')).toEqual([]);
    const back = await hub().join(room.guest_token, 'Pat', guest.waiting.participantToken);
    expect(back.joined.resumed).toBe(true);
  });

  it('refuses a guest the host cannot admit into a full call, and a guest who tries to decide', async () => {
    const room = await hub().createRoom({ enable_waiting_room: true });
    const host = await hub().join(room.access_token, 'Host');
    for (let i = 0; i < 7; i++) await hub().join(room.access_token, `Host ${i}`);
    const guest = await hub().knock(room.guest_token, 'Pat');
    expect(await admit(host, guest.waiting.self.id)).toMatchObject({ type: 'error', code: 'room-full' });
    expect(guest.session.state).toBe('waiting');
    expect(await admit(host, 'no-such-peer')).toMatchObject({ type: 'error', code: 'not-found' });
  });

  it('does not hold anyone when the waiting room is off', async () => {
    const { guest } = await hub().hostAndGuest({ enable_waiting_room: false });
    expect(guest.joined.peers).toHaveLength(1);
    expect(guest.joined.waiting).toEqual([]);
  });
});

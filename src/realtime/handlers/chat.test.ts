// The chat handler, and the dispatch in front of it, over the real participation service.
import { describe, expect, it } from 'vitest';
import { dispatch } from '../dispatch.js';
import { useHubFixture } from '../hub.test-support.js';
import { parseClientMessage, type ClientMessage } from '../../shared/protocol.js';
import { sendChat } from './chat.js';

const hub = useHubFixture();

async function callOfTwo(overrides: Record<string, unknown> = {}) {
  const room = await hub().createRoom(overrides);
  const host = await hub().join(room.access_token, 'Dr. Ada');
  const guest = await hub().join(room.guest_token, 'Pat');
  host.connection.sent.length = 0;
  guest.connection.sent.length = 0;
  return { host, guest };
}

describe('chat', () => {
  it('reaches the others with the sender name and the server time, and is acknowledged to the sender', async () => {
    const { host, guest } = await callOfTwo();
    const other = await callOfTwo();
    await dispatch(hub().ctx, host.session, { type: 'chat', requestId: 'c1', text: 'hello' });
    expect(host.connection.sent).toEqual([{ type: 'ack', requestId: 'c1' }]);
    expect(guest.connection.sent).toEqual([
      { type: 'chat', from: host.joined.self.id, name: 'Dr. Ada', text: 'hello', sentAt: hub().clock.now().toISOString() },
    ]);
    expect(other.host.connection.sent).toEqual([]);
    expect(other.guest.connection.sent).toEqual([]);
  });

  it("passes the page's messageId on (the same on a retry), and refuses one that is not a short string", async () => {
    const { host, guest } = await callOfTwo();
    const parsed = parseClientMessage(JSON.stringify({ type: 'chat', requestId: 'c4', text: 'once', messageId: 'm-1' }));
    expect(parsed).toEqual({ ok: true, message: { type: 'chat', requestId: 'c4', text: 'once', messageId: 'm-1' } });
    await dispatch(hub().ctx, host.session, (parsed as { message: ClientMessage }).message);
    expect(guest.connection.all('chat')).toEqual([
      { type: 'chat', from: host.joined.self.id, name: 'Dr. Ada', text: 'once', sentAt: hub().clock.now().toISOString(), messageId: 'm-1' },
    ]);
    for (const messageId of ['', 'x'.repeat(65), 7, null]) {
      expect(parseClientMessage(JSON.stringify({ type: 'chat', requestId: 'c5', text: 'hi', messageId }))).toMatchObject({ ok: false, code: 'bad-request', requestId: 'c5' });
    }
  });

  it('is refused from a connection that has not joined the call', async () => {
    const { host, guest } = await callOfTwo();
    const stranger = hub().connect();
    await dispatch(hub().ctx, stranger.session, { type: 'chat', requestId: 'c2', text: 'let me in' });
    expect(stranger.connection.sent).toEqual([{ type: 'error', code: 'not-joined', message: 'Send join first', requestId: 'c2' }]);
    expect(host.connection.sent).toEqual([]);
    expect(guest.connection.sent).toEqual([]);
  });

  it('is refused when the room switched chat off', async () => {
    const { host, guest } = await callOfTwo({ enable_chat: false });
    await dispatch(hub().ctx, guest.session, { type: 'chat', requestId: 'c3', text: 'hi' });
    expect(guest.connection.sent).toEqual([{ type: 'error', code: 'chat-disabled', message: 'Chat is switched off for this room', requestId: 'c3' }]);
    expect(host.connection.sent).toEqual([]);
  });

  it('allows ten messages at once, then one a second', async () => {
    const { host, guest } = await callOfTwo();
    const call = { participant: guest.session.participant!, settings: hub().ctx.rooms.get(guest.session.participant!.roomId)!.settings };
    for (let i = 0; i < 11; i++) await sendChat(hub().ctx, guest.session, { type: 'chat', requestId: `r${i}`, text: `m${i}` }, call);
    expect(host.connection.all('chat')).toHaveLength(10);
    expect(guest.connection.sent.at(-1)).toEqual({ type: 'error', code: 'rate-limited', message: 'Too many chat messages; wait a moment', requestId: 'r10' });
    hub().clock.advance(1000);
    await sendChat(hub().ctx, guest.session, { type: 'chat', requestId: 'later', text: 'again' }, call);
    expect(guest.connection.sent.at(-1)).toEqual({ type: 'ack', requestId: 'later' });
    expect(host.connection.all('chat')).toHaveLength(11);
  });
});

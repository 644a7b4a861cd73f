// The invite handler over the real participation service: the link it makes works.
import { describe, expect, it } from 'vitest';
import { useHubFixture } from '../hub.test-support.js';
import type { InCall } from './call-handler.js';
import { createInvite } from './invites.js';

const hub = useHubFixture();

const inCall = (p: { session: { participant: InCall['participant'] | null } }): InCall => ({
  participant: p.session.participant!,
  settings: hub().ctx.rooms.get(p.session.participant!.roomId)!.settings,
});

describe('invite-create', () => {
  it('gives the host a join link of the public URL with which a guest joins the same call', async () => {
    const room = await hub().createRoom();
    const host = await hub().join(room.access_token, 'Host');
    await createInvite(hub().ctx, host.session, { type: 'invite-create', requestId: 'i1' }, inCall(host));
    const [reply] = host.connection.all('invite-created');
    expect(reply).toMatchObject({ type: 'invite-created', requestId: 'i1' });
    const match = /^http:\/\/parley\.test\/join\/([A-Za-z0-9_-]{43})$/.exec(reply!.url);
    expect(match).not.toBeNull();
    const invited = await hub().join(match![1]!, 'Invited');
    expect(invited.joined.self.role).toBe('guest');
    expect(invited.session.participant!.roomId).toBe(host.session.participant!.roomId);
  });

  it('refuses a guest', async () => {
    const room = await hub().createRoom();
    const guest = await hub().join(room.guest_token, 'Guest');
    await createInvite(hub().ctx, guest.session, { type: 'invite-create', requestId: 'i2' }, inCall(guest));
    expect(guest.connection.sent.at(-1)).toEqual({ type: 'error', code: 'forbidden', message: 'Only the host can invite', requestId: 'i2' });
  });

  it('refuses even the host when the room switched invites off', async () => {
    const room = await hub().createRoom({ enable_invites: false });
    const host = await hub().join(room.access_token, 'Host');
    await createInvite(hub().ctx, host.session, { type: 'invite-create', requestId: 'i3' }, inCall(host));
    expect(host.connection.sent.at(-1)).toEqual({
      type: 'error',
      code: 'invites-disabled',
      message: 'Invites are switched off for this room',
      requestId: 'i3',
    });
  });
});

// Messages a participant sends to the others of its call, relayed through the
// room's channel: WebRTC signaling (to one peer), media state and screen-share
// announcements (to everyone else).
import type { HubContext } from '../hub-context.js';
import { fail, reply, type Session } from '../session.js';
import type { CallHandler } from './call-handler.js';

// Fire and forget: WebRTC renegotiates what is lost, and these need no acknowledgement.
export const relaySignal: CallHandler<'signal'> = (ctx, session, message, { participant }) => {
  // Published on this participant's room only: a peer id of another room matches nobody there.
  void ctx.rooms.publish(session, message.to, { type: 'signal', from: participant.peerId, data: message.data });
};

export const relayMediaState: CallHandler<'media-state'> = (ctx, session, message, { participant }) => {
  void ctx.rooms.publish(session, null, { type: 'media-state', from: participant.peerId, audio: message.audio, video: message.video });
};

export const startScreenshare: CallHandler<'screenshare-start'> = (ctx, session, message, { participant, settings }) => {
  if (!settings.screenshare) return fail(session, 'screenshare-disabled', 'Screen sharing is switched off for this room', message.requestId);
  session.sharing = message.streamId;
  void ctx.rooms.publish(session, null, { type: 'screenshare-started', from: participant.peerId, streamId: message.streamId });
  reply(session, { type: 'ack', requestId: message.requestId });
};

export const stopScreenshare: CallHandler<'screenshare-stop'> = (ctx, session, _message, { participant }) =>
  stopSharing(ctx, session, participant.peerId);

/** Ends this session's screen share, if it has one, and tells the room (also when the room's settings forbid it now). */
export function stopSharing(ctx: HubContext, session: Session, from: string): void {
  if (session.sharing === null) return;
  session.sharing = null;
  void ctx.rooms.publish(session, null, { type: 'screenshare-stopped', from });
}

// `invite-create`: the host makes a new guest link for the call (the doctor
// decides who enters the consultation, so guests may not).
import { fail, reply } from '../session.js';
import type { CallHandler } from './call-handler.js';

export const createInvite: CallHandler<'invite-create'> = async (ctx, session, message, { participant, settings }) => {
  if (!settings.invites) return fail(session, 'invites-disabled', 'Invites are switched off for this room', message.requestId);
  if (participant.role !== 'host') return fail(session, 'forbidden', 'Only the host can invite', message.requestId);
  const token = await ctx.inFlight.track(ctx.participation.createInvite(participant.roomId));
  reply(session, { type: 'invite-created', requestId: message.requestId, url: `${ctx.options.publicUrl}/join/${token}` });
};

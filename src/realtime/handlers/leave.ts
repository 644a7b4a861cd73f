// `leave`: the participant hangs up. The leave is recorded before the reply,
// so that the browser's next page (feedback, return URL) sees it done.
import { CloseCode } from '../close-codes.js';
import { reply } from '../session.js';
import type { CallHandler } from './call-handler.js';

export const leaveCall: CallHandler<'leave'> = async (ctx, session, message, { participant }) => {
  // Nothing more is relayed to it meanwhile, and its close will not count as a drop.
  session.state = 'gone';
  await ctx.departures.markLeft(participant, session);
  reply(session, { type: 'left', requestId: message.requestId });
  ctx.endSession(session, CloseCode.normal, 'left');
};

// The SFU's messages (docs/signaling.md, "Group calls through an SFU"): JSEP
// between a participant's browser and the room's Janus VideoRoom, which only
// Parley talks to. Only a participant in the call gets here: dispatch.ts
// refuses these to someone still waiting (`not-admitted`), so a waiting guest
// publishes and receives nothing; a removed one's connection is closed, and
// its publications go with it (session-handle.ts).
import type { HubContext } from '../hub-context.js';
import { fail, reply, type Session } from '../session.js';
import type { CallHandler } from './call-handler.js';

function sfuOf(ctx: HubContext, session: Session, requestId?: string) {
  if (!ctx.sfu) fail(session, 'bad-request', 'This server has no SFU: calls are peer to peer', requestId);
  return ctx.sfu;
}

export const sfuPublish: CallHandler<'sfu-publish'> = async (ctx, session, message, { settings }) => {
  const sfu = sfuOf(ctx, session, message.requestId);
  if (!sfu) return;
  if (message.kind === 'screen' && !settings.screenshare) return fail(session, 'screenshare-disabled', 'Screen sharing is switched off for this room', message.requestId);
  const sdp = await sfu.publish(session, message.kind, message.offer);
  reply(session, { type: 'sfu-answer', requestId: message.requestId, kind: message.kind, sdp });
};

export const sfuUnpublish: CallHandler<'sfu-unpublish'> = (ctx, session, message) => ctx.sfu?.unpublish(session, message.kind);

export const sfuSubscribe: CallHandler<'sfu-subscribe'> = async (ctx, session, message) => {
  const sfu = sfuOf(ctx, session, message.requestId);
  if (!sfu) return;
  const offer = await sfu.subscribe(session);
  reply(session, { type: 'sfu-offer', requestId: message.requestId, sdp: offer.sdp, streams: offer.streams });
};

export const sfuAnswer: CallHandler<'sfu-answer'> = (ctx, session, message) => ctx.sfu?.answer(session, message.sdp);

export const sfuCandidate: CallHandler<'sfu-candidate'> = (ctx, session, message) => ctx.sfu?.trickle(session, message.target, message.candidate);

export const sfuLayer: CallHandler<'sfu-layer'> = (ctx, session, message) => ctx.sfu?.layer(session, message.mid, message.substream);

export const sfuLeave: CallHandler<'sfu-leave'> = (ctx, session) => ctx.sfu?.leave(session);

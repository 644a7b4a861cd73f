// `network-report`: what the participant's browser measured lately, stored
// for the participant sessions' network summary (docs/design.md, "Participant sessions"; docs/api.md). A
// notification, so nothing is answered; reports beyond the rate (one per
// 10 s and a few more) are dropped, as they only refine a summary.
import type { CallHandler } from './call-handler.js';

export const recordNetworkReport: CallHandler<'network-report'> = async (ctx, session, message, { participant }) => {
  if (!session.allowNetworkReport()) return;
  await ctx.inFlight.track(
    ctx.participation.reportNetwork(participant.token, {
      rtt: message.rttMs === null ? null : Math.round(message.rttMs),
      loss: message.lossPercent,
      kbps: message.bitrateKbps === null ? null : Math.round(message.bitrateKbps),
      relayed: message.relayed,
    }),
  );
};

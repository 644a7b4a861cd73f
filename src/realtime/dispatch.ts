// Routes a well-formed message to its handler. `join` is the only message of
// a session that has not joined; every other type has one handler in the
// table below, which is where a new message family goes.
import { handleJoin } from './handlers/join.js';
import type { CallHandler, CallMessageType } from './handlers/call-handler.js';
import { sendChat } from './handlers/chat.js';
import { admitParticipant, denyParticipant, removeParticipant } from './handlers/host-controls.js';
import { createInvite } from './handlers/invites.js';
import { leaveCall } from './handlers/leave.js';
import { recordNetworkReport } from './handlers/network-report.js';
import { answerConsent, startRecording, stopRecording } from './handlers/recording.js';
import { relayMediaState, relaySignal, startScreenshare, stopScreenshare } from './handlers/relay.js';
import { sfuAnswer, sfuCandidate, sfuLayer, sfuLeave, sfuPublish, sfuSubscribe, sfuUnpublish } from './handlers/sfu.js';
import type { HubContext } from './hub-context.js';
import type { ClientMessage } from '../shared/protocol.js';
import { fail, reply, type Session } from './session.js';

/**
 * One handler per message type of a joined session. The mapped type makes a
 * type added to ClientMessage without a handler a compile error.
 */
export const callHandlers: { [T in CallMessageType]: CallHandler<T> } = {
  signal: relaySignal,
  'media-state': relayMediaState,
  'screenshare-start': startScreenshare,
  'screenshare-stop': stopScreenshare,
  chat: sendChat,
  'invite-create': createInvite,
  leave: leaveCall,
  admit: admitParticipant,
  deny: denyParticipant,
  remove: removeParticipant,
  'network-report': recordNetworkReport,
  'sfu-publish': sfuPublish,
  'sfu-unpublish': sfuUnpublish,
  'sfu-subscribe': sfuSubscribe,
  'sfu-answer': sfuAnswer,
  'sfu-candidate': sfuCandidate,
  'sfu-layer': sfuLayer,
  'sfu-leave': sfuLeave,
  'recording-start': startRecording,
  'recording-stop': stopRecording,
  'recording-consent': answerConsent,
};

/** What someone waiting to be let in may do: nothing of the call, only give up waiting. */
const WHILE_WAITING = new Set<CallMessageType>(['leave']);

export async function dispatch(ctx: HubContext, session: Session, message: ClientMessage): Promise<void> {
  // Answered in any state: the page checks its connection before and after joining.
  if (message.type === 'ping') return reply(session, { type: 'pong' });
  if (message.type === 'join') {
    if (session.state !== 'new') return fail(session, 'already-joined', 'This connection has joined already', message.requestId);
    return handleJoin(ctx, session, message);
  }
  const participant = session.participant;
  const requestId = 'requestId' in message ? message.requestId : undefined;
  if (session.state === 'waiting' && !WHILE_WAITING.has(message.type)) {
    return fail(session, 'not-admitted', 'You are waiting for the host to let you in', requestId);
  }
  if ((session.state !== 'joined' && session.state !== 'waiting') || !participant) return fail(session, 'not-joined', 'Send join first', requestId);
  const settings = ctx.rooms.get(participant.roomId)?.settings;
  if (!settings) return fail(session, 'not-joined', 'Send join first', requestId);
  // The table pairs each type with its handler; TypeScript cannot follow that pairing through an index.
  const handler = callHandlers[message.type] as CallHandler;
  return handler(ctx, session, message, { participant, settings });
}

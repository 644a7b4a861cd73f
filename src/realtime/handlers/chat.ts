// `chat`: a text message to everyone else in the call. The server stamps the
// sender's name and the time, so that nobody can write in another's name. The
// sender's acknowledgement means Redis took the line: every node in the room
// then gets it, once, a node away from Redis at that moment when it is back
// (docs/design.md, "Chat lines across nodes"). When Redis did not take it
// (away, or no answer within 2 s), the sender is told. Nobody gets it then,
// except from a Redis that froze and took the message after all: a retry
// carries the same messageId, so the page shows it once.
import { fail, reply } from '../session.js';
import type { CallHandler } from './call-handler.js';

export const sendChat: CallHandler<'chat'> = async (ctx, session, message, { participant, settings }) => {
  if (!settings.chat) return fail(session, 'chat-disabled', 'Chat is switched off for this room', message.requestId);
  if (!session.allowChat()) return fail(session, 'rate-limited', 'Too many chat messages; wait a moment', message.requestId);
  const sent = await ctx.rooms.publish(
    session,
    null,
    {
      type: 'chat',
      from: participant.peerId,
      name: participant.name,
      text: message.text,
      sentAt: ctx.clock.now().toISOString(),
      ...(message.messageId !== undefined ? { messageId: message.messageId } : {}),
    },
    { localFallback: false, line: true },
  );
  if (!sent) return fail(session, 'unavailable', 'Your message could not be sent. Try again.', message.requestId);
  reply(session, { type: 'ack', requestId: message.requestId });
};

// A connection's life in the hub: opened, each frame rate-checked, parsed and
// dispatched, and its close, which counts as a drop unless the server ended it.
import { CloseCode } from './close-codes.js';
import { dispatch } from './dispatch.js';
import type { HubContext } from './hub-context.js';
import { stopIceRenewal } from './ice-renewal.js';
import { parseClientMessage, type ParseResult } from '../shared/protocol.js';
import { createSession, fail, type Connection, type Session } from './session.js';

/** What the transport (ws-server.ts) calls for one connection. */
export interface SessionHandle {
  onFrame(raw: string): void;
  onClose(): void;
}

export function openSession(ctx: HubContext, connection: Connection): SessionHandle {
  const session = createSession(connection, ctx.clock);
  session.joinTimer = setTimeout(() => {
    if (session.state === 'new') ctx.endSession(session, CloseCode.joinTimeout, 'no join');
  }, ctx.options.joinTimeoutMs ?? 15_000);
  session.joinTimer.unref();
  ctx.open.add(session);
  ctx.options.observe?.connections(1);
  return {
    onFrame: (raw) => receiveFrame(ctx, session, raw),
    onClose: () => connectionClosed(ctx, session),
  };
}

function requestIdOf(parsed: ParseResult): string | undefined {
  if (!parsed.ok) return parsed.requestId;
  return 'requestId' in parsed.message ? parsed.message.requestId : undefined;
}

export function receiveFrame(ctx: HubContext, session: Session, raw: string): void {
  if (session.state === 'gone') return;
  // Parsed before the rate check, so that a refused request still gets its one reply (with its requestId).
  const parsed = parseClientMessage(raw);
  if (!session.allowFrame()) {
    if (!session.allowRefusal()) {
      ctx.endSession(session, CloseCode.policy, 'too many messages');
      if (session.participant) void ctx.departures.markLeft(session.participant, session);
      return;
    }
    return fail(session, 'rate-limited', 'Too many messages; slow down', requestIdOf(parsed));
  }
  if (!parsed.ok) return fail(session, parsed.code, parsed.message, parsed.requestId);
  ctx.options.observe?.message(parsed.message.type);
  ctx.inFlight.track(dispatch(ctx, session, parsed.message)).catch((error: unknown) => {
    ctx.log.error({ err: error }, 'signaling request failed');
    fail(session, 'unavailable', 'The server could not handle this request; try again', 'requestId' in parsed.message ? parsed.message.requestId : undefined);
  });
}

/** The socket's close comes exactly once per connection, whoever ended it. */
export function connectionClosed(ctx: HubContext, session: Session): void {
  ctx.options.observe?.connections(-1);
  ctx.open.delete(session);
  if (session.joinTimer) clearTimeout(session.joinTimer);
  stopIceRenewal(session);
  const wasEnded = session.ended;
  session.ended = true;
  session.state = 'gone';
  ctx.rooms.leave(session);
  // Its publications and subscription go with the connection, whatever ended it (a removal too).
  ctx.sfu?.leave(session).catch((error: unknown) => ctx.log.warn({ err: error }, 'sfu handles not released'));
  // A drop (not a leave, not an ejection): the participant is held for the reconnect grace.
  if (!wasEnded && session.participant) ctx.departures.markDropped(session.participant, session);
}

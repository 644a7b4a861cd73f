// `join`: where a connection is authenticated, by the join token of its first
// message, and becomes a participant of a call; with a participantToken it
// resumes that participant instead (after a drop or from another network).
import { NotFoundError, RoomClosedError } from '../../errors.js';
import { returnUrlOf, RoomFullError, settingsOf, TurnedAwayError } from '../../domain/participation/participation.service.js';
import { CloseCode } from '../close-codes.js';
import type { HubContext } from '../hub-context.js';
import { keepIceServersFresh } from '../ice-renewal.js';
import type { ClientMessage } from '../../shared/protocol.js';
import { fail, reply, type Session } from '../session.js';
import { recordingOnEntry } from '../recording-sync.js';
import { letInOnceOpen, peerInfo } from './host-controls.js';

/** Unknown join links one connection may try: a browser sends one; more is someone guessing. */
export const MAX_FAILED_JOINS = 5;

export async function handleJoin(ctx: HubContext, session: Session, message: Extract<ClientMessage, { type: 'join' }>): Promise<void> {
  const { participation, departures, log } = ctx;
  session.state = 'joining';
  // Back within the reconnect grace: the drop's hold ends here; its leave is
  // recorded after all if this join does not resume that participant.
  const heldLeave = message.participantToken ? departures.takeHold(message.participantToken) : null;
  // A resume right after a leave was recorded: that leave must land first, or it would undo the resume.
  if (message.participantToken) await departures.inFlightFor(message.participantToken);
  let joined;
  try {
    joined = await ctx.inFlight.track(participation.join(message));
  } catch (error) {
    if (heldLeave) void heldLeave();
    if (!session.ended) session.state = 'new';
    if (error instanceof NotFoundError) {
      fail(session, 'not-found', 'This join link is not valid', message.requestId);
      if (++session.failedJoins >= MAX_FAILED_JOINS) ctx.endSession(session, CloseCode.notFound, 'too many unknown join links');
      return;
    }
    if (error instanceof RoomClosedError) return fail(session, 'room-closed', 'This room is closed', message.requestId);
    if (error instanceof RoomFullError) return fail(session, 'room-full', error.message, message.requestId);
    if (error instanceof TurnedAwayError) return fail(session, error.decision, error.message, message.requestId);
    throw error;
  }
  const { participant, room, resumed } = joined;
  if (heldLeave && !resumed) void heldLeave();
  if (session.ended) {
    // The socket went away (or the server began to stop) while the database answered.
    await departures.markLeft(participant, session);
    return;
  }
  if (session.joinTimer) clearTimeout(session.joinTimer);
  session.joinTimer = null;
  session.participant = participant;
  session.state = participant.admission === 'waiting' ? 'waiting' : 'joined';
  ctx.rooms.enter(room.id, session, settingsOf(room));
  if (ctx.closedRooms.has(room.id)) {
    reply(session, { type: 'room-closed', reason: 'closed' });
    ctx.endSession(session, CloseCode.roomClosed, 'room closed');
    await departures.markLeft(participant, session);
    return;
  }
  // The participant's old connection, on whichever node, closes quietly.
  if (resumed) void ctx.rooms.publish(session, participant.peerId, { type: 'session-replaced' });
  const self = peerInfo(participant);
  if (participant.admission === 'waiting') {
    reply(session, { type: 'waiting', requestId: message.requestId, participantToken: participant.token, self, returnUrl: returnUrlOf(room, participant.role) });
    // Back in a room whose waiting room was turned off while this connection was away: nobody is asked any more
    // (unless the call is full: then it waits, listed to the hosts, as below).
    if (!room.enable_waiting_room && (await letInOnceOpen(ctx, session))) return;
    // The hosts hear that someone waits (again, after a drop: they keep one entry per id); the call hears nothing.
    void ctx.rooms.publish(session, null, { type: 'participant-waiting', peer: self }, { toRole: 'host' });
    log.info({ room: room.id, peer: participant.peerId, resumed }, 'participant waiting');
    return;
  }
  // An offer sent with a new participant's join goes to the peer in the call
  // longest (the only one, in a consultation), without waiting for the newcomer
  // to read this reply and send it: one round trip less before the call.
  const offeredTo = message.offer !== undefined && !resumed ? joined.peers[0]?.peerId : undefined;
  // The reply first: the newcomer's other offers wait for it, the others' news and the log line do not.
  // (The others still hear `peer-joined` before any offer: it is published before any later frame is read.)
  reply(session, {
    type: 'joined',
    requestId: message.requestId,
    ...(offeredTo ? { offeredTo } : {}),
    participantToken: participant.token,
    self,
    // Read in the join's transaction, after the room's row was locked: no second query before the reply.
    peers: joined.peers.map(peerInfo),
    waiting: joined.waiting.map(peerInfo),
    settings: settingsOf(room),
    iceServers: ctx.options.iceServersFor(participant.peerId),
    iceTransportPolicy: ctx.options.iceTransportPolicy,
    ...(ctx.sfu ? { sfu: ctx.sfu.entry } : {}),
    returnUrl: returnUrlOf(room, participant.role),
    resumed,
  });
  keepIceServersFresh(ctx, session);
  void ctx.rooms.publish(session, null, { type: 'peer-joined', peer: self });
  if (offeredTo) void ctx.rooms.publish(session, offeredTo, { type: 'signal', from: participant.peerId, data: { description: { type: 'offer', sdp: message.offer } } });
  log.info({ room: room.id, peer: participant.peerId, resumed }, 'participant joined');
  await recordingOnEntry(ctx, session, room);
}

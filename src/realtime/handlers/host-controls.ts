// Host controls (docs/design.md, "Waiting room"; docs/call.md, "Waiting room"): a host lets a
// waiting participant into the call (`admit`), turns it away (`deny`), or
// removes a guest from the call (`remove`). The database decides
// (participants.admission), so two tabs of the same host, or two hosts on
// different nodes, cannot both win; the node that holds the participant's
// connection then acts on the decision (receiveDecision), wherever it is.
import type { Participant } from '../../domain/participation/participation.service.js';
import { returnUrlOf, settingsOf } from '../../domain/participation/participation.service.js';
import type { HostDecision } from '../../domain/buses/signal-bus.js';
import { CloseCode } from '../close-codes.js';
import type { HubContext } from '../hub-context.js';
import { keepIceServersFresh } from '../ice-renewal.js';
import type { PeerInfo } from '../../shared/protocol.js';
import { recordingOnEntry } from '../recording-sync.js';
import { fail, reply, type Session } from '../session.js';
import type { CallHandler } from './call-handler.js';

export const peerInfo = (p: Participant): PeerInfo => ({ id: p.peerId, name: p.name, role: p.role });

/** Only a host may decide who is in the call. */
function refuseGuest(session: Session, participant: Participant, requestId: string): boolean {
  if (participant.role === 'host') return false;
  fail(session, 'forbidden', 'Only the host can decide who is in the call', requestId);
  return true;
}

export const admitParticipant: CallHandler<'admit'> = async (ctx, session, message, { participant }) => {
  if (refuseGuest(session, participant, message.requestId)) return;
  const outcome = await ctx.participation.admit(participant.roomId, message.peerId);
  if (!outcome.ok) {
    if (outcome.reason === 'full') return fail(session, 'room-full', 'The call is full: someone must leave before another person can join', message.requestId);
    if (outcome.reason === 'closed') return fail(session, 'room-closed', 'This room is closed', message.requestId);
    return fail(session, 'not-found', 'This person is no longer waiting', message.requestId);
  }
  decided(ctx, session, message.peerId, 'admitted');
  reply(session, { type: 'ack', requestId: message.requestId });
};

export const denyParticipant: CallHandler<'deny'> = async (ctx, session, message, { participant }) => {
  if (refuseGuest(session, participant, message.requestId)) return;
  const denied = await ctx.participation.turnAway(participant.roomId, message.peerId, 'denied');
  if (!denied) return fail(session, 'not-found', 'This person is no longer waiting', message.requestId);
  decided(ctx, session, message.peerId, 'denied');
  reply(session, { type: 'ack', requestId: message.requestId });
};

export const removeParticipant: CallHandler<'remove'> = async (ctx, session, message, { participant }) => {
  if (refuseGuest(session, participant, message.requestId)) return;
  const removed = await ctx.participation.turnAway(participant.roomId, message.peerId, 'removed');
  if (!removed) return fail(session, 'not-found', 'There is no such guest in the call', message.requestId);
  void ctx.rooms.publish(session, message.peerId, { type: 'host-decision', decision: 'removed' });
  void ctx.rooms.publish(session, null, { type: 'peer-left', peerId: message.peerId });
  ctx.log.info({ room: participant.roomId, peer: message.peerId, by: participant.peerId }, 'participant removed');
  reply(session, { type: 'ack', requestId: message.requestId });
};

/** Tells the participant's node, and the other hosts' pages, what this host decided. */
function decided(ctx: HubContext, session: Session, peerId: string, decision: 'admitted' | 'denied'): void {
  void ctx.rooms.publish(session, peerId, { type: 'host-decision', decision });
  void ctx.rooms.publish(session, null, { type: 'waiting-ended', peerId, outcome: decision }, { toRole: 'host' });
  ctx.log.info({ room: session.participant?.roomId, peer: peerId, by: session.participant?.peerId }, `participant ${decision}`);
}

/**
 * The room's waiting room was turned off (PUT enable_waiting_room: false):
 * someone waiting on this node is let in as if a host had admitted them, since
 * nobody is asked any more. The database decides as for a host's admit: a
 * full call keeps them waiting, for a host to decide. Whether it let them in.
 */
export async function letInOnceOpen(ctx: HubContext, session: Session): Promise<boolean> {
  const participant = session.participant;
  if (!participant || session.state !== 'waiting') return false;
  const outcome = await ctx.participation.admit(participant.roomId, participant.peerId);
  if (!outcome.ok) return false;
  void ctx.rooms.publish(session, null, { type: 'waiting-ended', peerId: participant.peerId, outcome: 'admitted' }, { toRole: 'host' });
  ctx.log.info({ room: participant.roomId, peer: participant.peerId }, 'participant admitted: the waiting room was turned off');
  await enterCall(ctx, session, participant);
  return true;
}

/** A host's decision reached the node that holds the participant's connection. */
export async function receiveDecision(ctx: HubContext, session: Session, decision: HostDecision['decision']): Promise<void> {
  const participant = session.participant;
  if (!participant) return;
  if (decision === 'admitted' && session.state === 'waiting') return enterCall(ctx, session, participant);
  if (decision === 'denied' && session.state === 'waiting') {
    reply(session, { type: 'denied' });
    return ctx.endSession(session, CloseCode.denied, 'not let in');
  }
  if (decision === 'removed' && session.state === 'joined') {
    reply(session, { type: 'removed' });
    return ctx.endSession(session, CloseCode.removed, 'removed by the host');
  }
}

/**
 * A waiting participant let in: it gets what a join gives (who is in the
 * call now, read after the admission committed), and the call hears of it.
 */
async function enterCall(ctx: HubContext, session: Session, waiting: Participant): Promise<void> {
  const [room, present] = await Promise.all([ctx.participation.room(waiting.roomId), ctx.participation.present(waiting.roomId)]);
  // Gone meanwhile (closed, dropped, replaced): a resume finds the admission in the database.
  if (!room || session.state !== 'waiting') return;
  const participant: Participant = { ...waiting, admission: 'admitted' };
  session.participant = participant;
  session.state = 'joined';
  const self = peerInfo(participant);
  reply(session, {
    type: 'admitted',
    participantToken: participant.token,
    self,
    peers: present.peers.filter((p) => p.token !== participant.token).map(peerInfo),
    waiting: [],
    settings: settingsOf(room),
    iceServers: ctx.options.iceServersFor(participant.peerId),
    iceTransportPolicy: ctx.options.iceTransportPolicy,
    ...(ctx.sfu ? { sfu: ctx.sfu.entry } : {}),
    returnUrl: returnUrlOf(room, participant.role),
    resumed: false,
  });
  keepIceServersFresh(ctx, session);
  void ctx.rooms.publish(session, null, { type: 'peer-joined', peer: self });
  ctx.log.info({ room: room.id, peer: participant.peerId }, 'participant let in');
  await recordingOnEntry(ctx, session, room);
}

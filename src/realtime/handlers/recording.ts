// Recording with consent in the call (docs/design.md, "Recording with
// consent", "Consent in the call"; docs/signaling.md, "Recording with
// consent"). A host presses record (`recording-start`): everyone in the call,
// on every node, is asked (`recording-consent-request`), and the node of
// that host counts the answers (consent-round.ts; they reach it on the
// room's channel as `recording-answer`). Only when everyone still in the call
// agreed does the recording start (services.recordings.start); otherwise the
// host is told who did not (`recording-declined`). Who joins during a
// recording is asked by its own node (recording-sync.ts) and recorded only
// once it agreed (services.recordings.addConsent). The host stops it
// (`recording-stop`), and so do the last host's leave and the room's close.
import type { SignalEnvelope } from '../../domain/buses/signal-bus.js';
import type { HubContext } from '../hub-context.js';
import { createConsentRound, type RoundOutcome } from '../consent-round.js';
import type { Round } from '../recording-rooms.js';
import { consentOf, newAskId, recordingEnabled, stopWithoutHost } from '../recording-sync.js';
import { CONSENT_TIMEOUT_MS } from '../../shared/recording-protocol.js';
import { fail, reply, type Session } from '../session.js';
import type { CallHandler } from './call-handler.js';

const idle = (enabled: boolean) => ({ type: 'recording-state' as const, enabled, state: 'idle' as const, recorded: [] });

/** Only a host records, only in a room that allows it, only through an SFU; one recording (or request) at a time. */
async function refusal(ctx: HubContext, session: Session, requestId: string): Promise<boolean> {
  const participant = session.participant!;
  if (participant.role !== 'host') {
    fail(session, 'forbidden', 'Only the host can record the call', requestId);
    return true;
  }
  const row = await ctx.participation.room(participant.roomId);
  if (!row || !recordingEnabled(row)) {
    fail(session, 'recording-disabled', 'Recording is not enabled for this room (enable_recording)', requestId);
    return true;
  }
  // Media is recorded by the SFU (Janus), so a call is recorded only where there is one.
  if (!ctx.sfu || !ctx.options.recordings) {
    fail(session, 'recording-unavailable', 'This server cannot record: recording needs the SFU (SFU=janus)', requestId);
    return true;
  }
  const room = ctx.recording.of(participant.roomId);
  room.enabled = true;
  if (room.asking || ctx.recording.roundIn(participant.roomId) || (await ctx.options.recordings.active(participant.roomId))) {
    fail(session, 'recording-busy', 'This call is being recorded, or everyone is being asked already', requestId);
    return true;
  }
  return false;
}

export const startRecording: CallHandler<'recording-start'> = async (ctx, session, message, { participant }) => {
  if (await refusal(ctx, session, message.requestId)) return;
  const roomId = participant.roomId;
  const others = (await ctx.participation.present(roomId)).peers.filter((peer) => peer.peerId !== participant.peerId);
  const askId = newAskId();
  const round: Round = {
    askId,
    roomId,
    host: session,
    hostName: participant.name,
    consent: createConsentRound(others.map(({ peerId, name, role }) => ({ peerId, name, role }))),
    // Pressing record is the host's own consent.
    hostAcceptedAt: ctx.clock.now(),
    timer: setTimeout(() => track(ctx, settle(ctx, round, round.consent.timedOut())), ctx.options.recordingTimes?.consentMs ?? CONSENT_TIMEOUT_MS),
  };
  round.timer.unref();
  ctx.recording.rounds.set(askId, round);
  ctx.recording.of(roomId).asking = true;
  reply(session, { type: 'ack', requestId: message.requestId });
  ctx.log.info({ room: roomId, by: participant.peerId, asked: others.length }, 'recording: everyone asked');
  if (!others.length) return settle(ctx, round, round.consent.timedOut());
  await ctx.rooms.tell(roomId, { type: 'recording-state', enabled: true, state: 'asking', recorded: [] });
  await ctx.rooms.publish(session, null, { type: 'recording-consent-request', askId, by: participant.name });
};

export const stopRecording: CallHandler<'recording-stop'> = async (ctx, session, message, { participant }) => {
  if (participant.role !== 'host') return fail(session, 'forbidden', 'Only the host can stop the recording', message.requestId);
  const round = ctx.recording.roundIn(participant.roomId);
  if (round) await cancel(ctx, round);
  const active = await ctx.options.recordings?.active(participant.roomId);
  if (active) {
    await ctx.options.recordings!.stop(active.id);
    ctx.log.info({ room: participant.roomId, by: participant.peerId, recording: active.id }, 'recording stopped by the host');
  }
  reply(session, { type: 'ack', requestId: message.requestId });
};

export const answerConsent: CallHandler<'recording-consent'> = async (ctx, session, message, { participant }) => {
  const roomId = participant.roomId;
  const room = ctx.recording.get(roomId);
  const askedHere = room?.asks.get(message.askId);
  if (askedHere === undefined) {
    // A host's request: its node counts the answer.
    await ctx.rooms.tell(roomId, { type: 'recording-answer', askId: message.askId, peerId: participant.peerId, accepted: message.accepted, at: ctx.clock.now().toISOString() });
    return reply(session, { type: 'ack', requestId: message.requestId });
  }
  if (askedHere !== participant.peerId) return fail(session, 'not-found', 'There is no such request to you', message.requestId);
  room!.asks.delete(message.askId);
  const active = room!.active;
  if (active && message.accepted) {
    // Recorded from the `recording-changed` this publishes on (recording-sync.ts).
    await ctx.options.recordings?.addConsent(active.id, consentOf(participant, ctx.clock.now())).catch((error: unknown) => ctx.log.info({ err: error, room: roomId }, 'consent after the recording ended'));
  } else if (active) {
    await ctx.rooms.tell(roomId, { type: 'recording-declined', names: [participant.name] }, { toRole: 'host' });
  }
  reply(session, { type: 'ack', requestId: message.requestId });
};

const track = (ctx: HubContext, work: Promise<void>) => void ctx.inFlight.track(work).catch((error: unknown) => ctx.log.error({ err: error }, 'recording request failed'));

/** The round is over: the recording starts if everyone agreed, otherwise the hosts hear who did not. */
async function settle(ctx: HubContext, round: Round, outcome: RoundOutcome): Promise<void> {
  if (!outcome.done || ctx.recording.rounds.get(round.askId) !== round) return;
  clearTimeout(round.timer);
  ctx.recording.rounds.delete(round.askId);
  const room = ctx.recording.of(round.roomId);
  room.asking = false;
  if (outcome.declined.length) {
    ctx.log.info({ room: round.roomId, declined: outcome.declined.length }, 'recording: not everyone agreed');
    await ctx.rooms.tell(round.roomId, { type: 'recording-declined', names: outcome.declined }, { toRole: 'host' });
    await ctx.rooms.tell(round.roomId, idle(room.enabled));
    return;
  }
  const host = round.host.participant!;
  const consents = [consentOf(host, round.hostAcceptedAt), ...outcome.accepted.map((answer) => consentOf(answer, answer.at))];
  try {
    // Its `recording-changed` tells every node to record and to tell its pages (recording-sync.ts).
    await ctx.options.recordings!.start({ roomId: round.roomId, startedBy: round.hostName, consents });
  } catch (error) {
    ctx.log.warn({ err: error, room: round.roomId }, 'recording not started');
    await ctx.rooms.tell(round.roomId, idle(room.enabled));
  }
}

/** Someone asked in the round came back before answering: its page hears the request again (after its state on entry, from its own node). */
async function askAgain(ctx: HubContext, round: Round, peerId: string): Promise<void> {
  await ctx.rooms.tell(round.roomId, { type: 'recording-state', enabled: true, state: 'asking', recorded: [] }, { to: peerId });
  await ctx.rooms.tell(round.roomId, { type: 'recording-consent-request', askId: round.askId, by: round.hostName }, { to: peerId });
}

/** The request is withdrawn (its host stopped it or left): every page closes its question. */
async function cancel(ctx: HubContext, round: Round): Promise<void> {
  clearTimeout(round.timer);
  ctx.recording.rounds.delete(round.askId);
  const room = ctx.recording.of(round.roomId);
  room.asking = false;
  await ctx.rooms.tell(round.roomId, idle(room.enabled));
}

/**
 * What the hub hears on a room's channel that concerns recording: answers to
 * a request this node holds and someone asked in it coming back (for the node
 * only), a request under way or over
 * (the pages get it too), and someone leaving (out of the count of a request;
 * the last host's leave stops the recording).
 */
export function heardForRecording(ctx: HubContext, roomId: number, message: SignalEnvelope['message']): boolean {
  if (message.type === 'recording-answer') {
    const round = ctx.recording.rounds.get(message.askId);
    if (round) track(ctx, settle(ctx, round, round.consent.answer(message.peerId, message.accepted, new Date(message.at))));
    return true;
  }
  if (message.type === 'recording-back') {
    // Back (a reload, a drop) before answering a request held here: its new page is asked again, the same question.
    const round = ctx.recording.roundIn(roomId);
    if (round?.consent.waitsFor(message.peerId)) track(ctx, askAgain(ctx, round, message.peerId));
    return true;
  }
  if (message.type === 'recording-state') {
    const room = ctx.recording.get(roomId);
    if (room) room.asking = message.state === 'asking';
    return false;
  }
  if (message.type === 'peer-left') {
    const round = ctx.recording.roundIn(roomId);
    if (round?.host.participant?.peerId === message.peerId) track(ctx, cancel(ctx, round));
    else if (round) track(ctx, settle(ctx, round, round.consent.left(message.peerId)));
    if (ctx.recording.get(roomId)?.active) track(ctx, stopWithoutHost(ctx, roomId));
  }
  return false;
}

// A room's recording applied to this node's participants (docs/design.md,
// "Recording with consent", "Consent in the call"): after every
// `recording-changed` room event, and as each participant enters the call,
// the node reads the recording in progress from the database and, for each
// of its participants in the room, tells the page (`recording-state`),
// records the publications of those who consented (sfu-calls.ts record), and
// asks whoever has not been asked for this recording yet, such as someone
// who joined during it. It renews the recording's lease while it has someone
// in the room, and stops the recording when the room closes, its last host
// leaves, or no Janus takes the room after its own was lost.
import { randomBytes } from 'node:crypto';
import type { Participant } from '../domain/participation/participation.service.js';
import type { ConsentInput } from '../domain/recordings/recordings.service.js';
import type { RoomRow } from '../domain/rooms/room-rows.repo.js';
import type { HubContext } from './hub-context.js';
import { RENEW_EVERY_MS, type RoomRecording } from './recording-rooms.js';
import type { RecordingState } from '../shared/recording-protocol.js';
import { reply, type Session } from './session.js';

/** The room's `enable_recording` (docs/design.md, "Recording with consent"). */
export const recordingEnabled = (row: RoomRow): boolean => row.enable_recording;

export const newAskId = () => randomBytes(12).toString('base64url');

export const consentOf = (participant: Pick<Participant, 'peerId' | 'name' | 'role'>, acceptedAt: Date): ConsentInput => ({
  peerId: participant.peerId,
  displayName: participant.name,
  role: participant.role,
  acceptedAt,
});

/** The room's recording as its pages show it. */
export function stateOf(room: RoomRecording | undefined): RecordingState {
  return {
    type: 'recording-state',
    enabled: room?.enabled ?? false,
    state: room?.active ? 'recording' : room?.asking ? 'asking' : 'idle',
    recorded: room?.active?.consentedPeerIds ?? [],
  };
}

/** This node's participants in the call of the room. */
export const joinedHere = (ctx: HubContext, roomId: number): Session[] =>
  [...(ctx.rooms.get(roomId)?.sessions ?? [])].filter((session) => session.state === 'joined' && session.participant !== null);

/** The name of a host in the call, for "… asks to record": the one who started it may have left. */
async function askerOf(ctx: HubContext, roomId: number): Promise<string> {
  const { peers } = await ctx.participation.present(roomId);
  return peers.find((peer) => peer.role === 'host')?.name ?? '';
}

/**
 * One participant here and the room's recording: its page told, its
 * publications recorded if it consented, asked if it was not asked yet.
 */
function applyTo(ctx: HubContext, session: Session, room: RoomRecording, asker: () => Promise<string>, entering = false): Promise<void> | void {
  const peerId = session.participant!.peerId;
  const active = room.active;
  const consented = active?.consentedPeerIds.includes(peerId) ?? false;
  ctx.sfu?.record(session, consented ? `${active!.rawDir}/${peerId}` : null).catch((error: unknown) => ctx.log.warn({ err: error, peer: peerId }, 'recording not switched'));
  reply(session, stateOf(room));
  if (!active || consented) return;
  // Back (a reload, a drop) before answering: asked again, the same question.
  const open = entering ? [...room.asks].find(([, asked]) => asked === peerId)?.[0] : undefined;
  if (room.asked.has(peerId) && !open) return;
  room.asked.add(peerId);
  const askId = open ?? newAskId();
  room.asks.set(askId, peerId);
  return asker().then((by) => reply(session, { type: 'recording-consent-request', askId, by }));
}

/** The recording in progress changed (or is new to this node): what it holds for the room follows. */
function follow(room: RoomRecording, active: RoomRecording['active']): void {
  room.active = active;
  if (active?.id === room.askedFor) return;
  // Everyone who consented when it started was asked; the others are asked now, once.
  room.askedFor = active?.id ?? null;
  room.asked = new Set(active?.consentedPeerIds ?? []);
  room.asks.clear();
}

/** Reads the room's recording again and applies it to everyone here in the room. */
export async function recordingChanged(ctx: HubContext, roomId: number): Promise<void> {
  const recordings = ctx.options.recordings;
  const sessions = joinedHere(ctx, roomId);
  if (!recordings || !sessions.length) return;
  const room = ctx.recording.of(roomId);
  follow(room, await recordings.active(roomId));
  let asker: Promise<string> | null = null;
  const once = () => (asker ??= askerOf(ctx, roomId));
  await Promise.all(joinedHere(ctx, roomId).map((session) => applyTo(ctx, session, room, once)));
  if (room.active) keepLease(ctx);
}

/** Someone entered the call here (joined, let in, back after a drop): the room's recording applies to them too. Never rejects. */
export function recordingOnEntry(ctx: HubContext, session: Session, row: RoomRow): Promise<void> {
  return entered(ctx, session, row).catch((error: unknown) => ctx.log.warn({ err: error, room: row.id }, 'recording state not read'));
}

async function entered(ctx: HubContext, session: Session, row: RoomRow): Promise<void> {
  const recordings = ctx.options.recordings;
  const known = ctx.recording.get(row.id);
  if (!recordings || (!recordingEnabled(row) && !known?.active)) return;
  const room = ctx.recording.of(row.id);
  room.enabled = recordingEnabled(row);
  follow(room, await recordings.active(row.id));
  if (session.state !== 'joined') return;
  await applyTo(ctx, session, room, () => askerOf(ctx, row.id), true);
  if (room.active) keepLease(ctx);
  // A host's request to record may be under way (held by the host's node, this one or another) and wait for this
  // participant, back after a reload: that node asks again. After the state above, which would close the question.
  else if (recordingEnabled(row)) await ctx.rooms.tell(row.id, { type: 'recording-back', peerId: session.participant!.peerId });
}

/** The room's settings were read again: a change of enable_recording reaches the pages here. */
export function recordingSettings(ctx: HubContext, row: RoomRow): void {
  const room = ctx.recording.get(row.id);
  if ((room?.enabled ?? false) === recordingEnabled(row)) return;
  const changed = ctx.recording.of(row.id);
  changed.enabled = recordingEnabled(row);
  for (const session of joinedHere(ctx, row.id)) reply(session, stateOf(changed));
}

/**
 * Someone left the room's call while it records: with no host left in the
 * call, the recording stops (several nodes may notice; stopping twice is harmless).
 */
export async function stopWithoutHost(ctx: HubContext, roomId: number): Promise<void> {
  const active = ctx.recording.get(roomId)?.active;
  if (!active || !ctx.options.recordings) return;
  const { peers } = await ctx.participation.present(roomId);
  if (peers.some((peer) => peer.role === 'host')) return;
  ctx.log.info({ room: roomId, recording: active.id }, 'recording stopped: no host left in the call');
  await ctx.options.recordings.stop(active.id);
}

/** The room was closed or deleted: its recording stops, and any request to record with it. */
export async function recordingRoomGone(ctx: HubContext, roomId: number): Promise<void> {
  const round = ctx.recording.roundIn(roomId);
  if (round) {
    clearTimeout(round.timer);
    ctx.recording.rounds.delete(round.askId);
  }
  const active = ctx.recording.get(roomId)?.active;
  if (active) await ctx.options.recordings?.stop(active.id);
}

/**
 * The room's Janus was lost and no instance took the room within the move's
 * time (sfu-calls.ts): nothing of it is being recorded, so its recording ends
 * with what was written (processing, then ready; failed with nothing) rather
 * than stay `recording` with nothing written. Several nodes may notice.
 */
export async function recordingSfuLost(ctx: HubContext, roomId: number): Promise<void> {
  const active = await ctx.options.recordings?.active(roomId);
  if (!active) return;
  ctx.log.warn({ room: roomId, recording: active.id }, 'recording stopped: no SFU took the room after its Janus was lost');
  await ctx.options.recordings!.stop(active.id);
}

/**
 * Every RENEW_EVERY_MS, the lease of each recording this node has someone in
 * (the service's lease outlives three renewals; a node killed lets it lapse,
 * and a job stops the recording). One refused (stopped meanwhile, or taken
 * over as lapsed) makes the node read the room's recording again.
 */
function keepLease(ctx: HubContext): void {
  ctx.recording.keepRenewing(ctx.options.recordingTimes?.renewMs ?? RENEW_EVERY_MS, () => {
    ctx.recording.forget((roomId) => ctx.rooms.get(roomId) !== undefined);
    const recording = ctx.recording.recording();
    if (!recording.length) return ctx.recording.stopRenewing();
    for (const [roomId, room] of recording) {
      if (!joinedHere(ctx, roomId).length) continue;
      ctx.inFlight.track(ctx.options.recordings!.renew(room.active!.id)).catch(() => ctx.inFlight.track(recordingChanged(ctx, roomId)).catch((error: unknown) => ctx.log.warn({ err: error, room: roomId }, 'recording not read again')));
    }
  });
}

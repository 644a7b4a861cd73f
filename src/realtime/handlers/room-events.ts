// What the API did to a room (RoomEventBus), applied to the calls on this
// node: new settings reach the participants (a waiting room turned off lets in
// those waiting), a closed or deleted room ejects them.
import type { RoomEvent } from '../../domain/buses/room-event-bus.js';
import { settingsOf } from '../../domain/participation/participation.service.js';
import { CloseCode } from '../close-codes.js';
import type { HubContext } from '../hub-context.js';
import { recordingChanged, recordingRoomGone, recordingSettings } from '../recording-sync.js';
import { letInOnceOpen } from './host-controls.js';
import { stopSharing } from './relay.js';

export async function handleRoomEvent(ctx: HubContext, event: RoomEvent): Promise<void> {
  if (event.type === 'room-updated') return applySettings(ctx, event.roomId);
  if (event.type === 'recording-changed') return recordingChanged(ctx, event.roomId);
  // Its recording stops first, while the pages are still here to be told.
  await recordingRoomGone(ctx, event.roomId).catch((error: unknown) => ctx.log.warn({ err: error, room: event.roomId }, 'recording not stopped'));
  await ejectEveryone(ctx, event.roomId, event.type === 'room-closed' ? 'closed' : 'deleted');
  // Its VideoRoom goes too (docs/design.md, "Group calls through an SFU"); every node tries, a second destroy is harmless.
  await ctx.sfu?.roomGone(event.roomId).catch((error: unknown) => ctx.log.warn({ err: error, room: event.roomId }, 'sfu room not released'));
}

/**
 * Reads the room's settings again, sends them to its participants here if
 * they changed, stops screen shares no longer allowed, and lets in whoever
 * waits here once the waiting room is off (one after the other: each
 * admission checks the call's size).
 */
async function applySettings(ctx: HubContext, roomId: number): Promise<void> {
  const room = ctx.rooms.get(roomId);
  if (!room) return;
  const row = await ctx.participation.room(roomId);
  if (!row) return;
  const settings = settingsOf(row);
  const changed = JSON.stringify(settings) !== JSON.stringify(room.settings);
  room.settings = settings;
  recordingSettings(ctx, row);
  const joined = [...room.sessions].filter((s) => s.state === 'joined');
  if (changed) for (const session of joined) session.connection.send({ type: 'settings', settings });
  for (const session of joined) {
    if (!room.settings.screenshare) stopSharing(ctx, session, session.participant!.peerId);
  }
  if (!row.enable_waiting_room) {
    for (const session of [...room.sessions].filter((s) => s.state === 'waiting')) await letInOnceOpen(ctx, session);
  }
}

/** Closes every connection of the room here (4001) and records their leaves. */
async function ejectEveryone(ctx: HubContext, roomId: number, reason: 'closed' | 'deleted'): Promise<void> {
  // Remembered even with nobody here: a join in flight lands after this and is ejected then.
  ctx.closedRooms.add(roomId);
  const room = ctx.rooms.get(roomId);
  if (!room) return;
  const ejected = [...room.sessions];
  for (const session of ejected) {
    session.connection.send({ type: 'room-closed', reason });
    ctx.endSession(session, CloseCode.roomClosed, `room ${reason}`);
  }
  await Promise.all(ejected.map((s) => (s.participant ? ctx.departures.markLeft(s.participant, s) : undefined)));
  ctx.log.info({ room: roomId, ejected: ejected.length, reason }, 'room closed: participants ejected');
}

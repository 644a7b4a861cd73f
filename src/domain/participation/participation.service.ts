// Taking part in a call: join tokens, participants and presence, invites and
// feedback. What presence does to the room (started, ended) follows the rules
// of rooms/room-lifecycle.ts. No transport here: the realtime hub and the page
// routes call this.
import { createHash } from 'node:crypto';
import type { Rating } from '../../db/schema.js';
import { NotFoundError, RoomClosedError } from '../../errors.js';
import type { FeedbackService } from '../feedback/feedback.service.js';
import { acceptsParticipants, graceWindowStart } from '../rooms/room-lifecycle.js';
import type { RoomRow, RoomsRepo } from '../rooms/rooms.repo.js';
import type { Clock } from '../support/clock.js';
import type { Ids } from '../support/ids.js';
import { TOKEN_PATTERN } from '../support/ids.js';
import type { TenantsRepo } from '../tenants/tenants.repo.js';
import type { ParticipantRow, ParticipantsRepo } from './participants.repo.js';

/** A mesh of peer-to-peer connections grows as n²: beyond this a call degrades for everyone. */
export const MAX_PARTICIPANTS = 8;
export const MAX_DISPLAY_NAME = 100;

export interface RoomSettingsView {
  chat: boolean;
  screenshare: boolean;
  invites: boolean;
  audioIndicator: boolean;
}

export interface Participant {
  token: string;
  /** Public identity shown to the other participants (the token itself is a secret). */
  peerId: string;
  roomId: number;
  role: 'host' | 'guest';
  name: string;
}

export interface JoinedCall {
  participant: Participant;
  room: RoomRow;
  /** The others connected to the call when this participant joined, oldest first. */
  peers: Participant[];
  resumed: boolean;
}

export class RoomFullError extends Error {
  constructor() {
    super(`This call is full (at most ${MAX_PARTICIPANTS} participants)`);
    this.name = 'RoomFullError';
  }
}

/** The public id of a participant: derived from its token, so every node computes the same one. */
export function peerIdOf(participantToken: string): string {
  return createHash('sha256').update(participantToken).digest('base64url').slice(0, 22);
}

export function settingsOf(room: RoomRow): RoomSettingsView {
  return {
    chat: room.enable_chat,
    screenshare: room.enable_screenshare,
    invites: room.enable_invites,
    audioIndicator: room.enable_audio_indicator,
  };
}

/** Where a participant goes after the call: host_return_url falls back to return_url. */
export function returnUrlOf(room: RoomRow, role: 'host' | 'guest'): string {
  return role === 'host' ? (room.host_return_url ?? room.return_url) : room.return_url;
}

function toParticipant(row: ParticipantRow): Participant {
  return { token: row.token, peerId: peerIdOf(row.token), roomId: row.room_id, role: row.role, name: row.display_name };
}

/**
 * Trimmed, control characters removed, at most MAX_DISPLAY_NAME characters; a
 * fallback when empty. Bidi embedding, override and isolate controls go too:
 * an unclosed override shows "Dr. Smith" for "htimS .rD" and runs on into the
 * text next to the name (Unicode TR9 §2). Names in right-to-left scripts need none.
 */
export function cleanDisplayName(raw: string, fallback: string): string {
  const cleaned = raw
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .replace(/[\u202a-\u202e\u2066-\u2069]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return [...(cleaned || fallback)].slice(0, MAX_DISPLAY_NAME).join('');
}

interface Deps {
  repo: ParticipantsRepo;
  rooms: RoomsRepo;
  tenants: TenantsRepo;
  feedback: FeedbackService;
  clock: Clock;
  ids: Ids;
  nodeId: string;
  roomEndGraceSeconds: number;
  nodeDeadAfterSeconds: number;
}

export function createParticipationService({ repo, rooms, tenants, feedback, clock, ids, nodeId, roomEndGraceSeconds, nodeDeadAfterSeconds }: Deps) {
  /** This node's last heartbeat failed (the database was away), and when it worked again. */
  let heartbeatFailed = false;
  let databaseBackAt: Date | null = null;

  async function resolve(joinToken: string) {
    if (!TOKEN_PATTERN.test(joinToken)) return null;
    return repo.findByJoinToken(joinToken);
  }

  return {
    nodeId,

    /** What a join link opens, for the join page: null for an unknown token. */
    resolve,

    /**
     * Joins the call of a join link, or resumes `participantToken` when it is
     * a participant of the same room that is connected or left within the grace period.
     */
    async join(input: { joinToken: string; displayName: string; participantToken?: string }): Promise<JoinedCall> {
      if (!TOKEN_PATTERN.test(input.joinToken)) throw new NotFoundError('This join link is not valid');
      const now = clock.now();
      if (input.participantToken) {
        const access = await repo.findByJoinToken(input.joinToken);
        if (!access) throw new NotFoundError('This join link is not valid');
        if (!acceptsParticipants(access.room.status)) throw new RoomClosedError();
        const resumed = await repo.resume(access.room.id, input.participantToken, access.role, nodeId, now, graceWindowStart(now, roomEndGraceSeconds));
        if (resumed.ok) return { participant: toParticipant(resumed.participant), room: resumed.room, peers: resumed.peers.map(toParticipant), resumed: true };
        if (resumed.reason === 'closed') throw new RoomClosedError();
        // Too late, not a participant of this room, or not of this link's role: an ordinary new join.
      }
      // One transaction finds the room by the token, starts it and adds the participant.
      const joined = await repo.join(input.joinToken, now, MAX_PARTICIPANTS, (room, role) => ({
        token: ids.secret(32),
        role,
        display_name: cleanDisplayName(input.displayName, role === 'host' ? (room.host_display_name ?? 'Host') : (room.guest_display_name ?? 'Guest')),
        node_id: nodeId,
      }));
      if (!joined.ok) {
        if (joined.reason === 'not-found') throw new NotFoundError('This join link is not valid');
        throw joined.reason === 'full' ? new RoomFullError() : new RoomClosedError();
      }
      return { participant: toParticipant(joined.participant), room: joined.room, peers: joined.peers.map(toParticipant), resumed: false };
    },

    /** Marks the participant left (if this node still holds it). Returns true when it was connected here. */
    async leave(participantToken: string): Promise<boolean> {
      return (await repo.leave(participantToken, nodeId, clock.now())) !== null;
    },

    room: (roomId: number) => repo.findRoom(roomId),

    /** A new invite link's token for the room (kind 'invite' in room_guest_tokens). */
    async createInvite(roomId: number): Promise<string> {
      const token = ids.secret(32);
      await repo.insertInvite(roomId, token, clock.now());
      return token;
    },

    /**
     * Feedback from a participant after the call: at most one per participant
     * session. Returns false when this session already gave one.
     */
    async submitFeedback(participantToken: string, rating: Rating, comment: string | null): Promise<boolean> {
      const found = TOKEN_PATTERN.test(participantToken) ? await repo.findParticipant(participantToken) : null;
      if (!found) throw new NotFoundError('Unknown participant');
      const tenant = await tenants.findTenant(found.room.tenant_id);
      if (!tenant) throw new NotFoundError('Unknown participant');
      return feedback.record({
        tenantId: tenant.id,
        timezone: tenant.timezone,
        roomToken: found.room.token,
        participantToken,
        rating,
        comment,
      });
    },

    /** This node is alive; it starts with nobody connected through it (a restart left no sockets open). */
    async registerNode(): Promise<void> {
      const now = clock.now();
      await repo.heartbeat(nodeId, now);
      await repo.leaveNodes({ nodeId }, now);
    },

    /**
     * The periodic presence job, safe on every node at once: heartbeat, mark
     * the participants of dead nodes as left, end rooms empty for longer than the grace.
     */
    async sweep(): Promise<{ endedRooms: number[] }> {
      const now = clock.now();
      try {
        await repo.heartbeat(nodeId, now);
      } catch (error) {
        heartbeatFailed = true;
        throw error;
      }
      if (heartbeatFailed) {
        heartbeatFailed = false;
        databaseBackAt = now;
      }
      const deadBefore = new Date(now.getTime() - nodeDeadAfterSeconds * 1000);
      // When the database was away, every node's heartbeat is old, not only a
      // dead one's: the others get NODE_DEAD_AFTER_SECONDS from its return to
      // beat again before their participants count as gone (docs/deploy.md).
      if (databaseBackAt === null || databaseBackAt <= deadBefore) await repo.leaveNodes({ deadBefore }, now);
      return { endedRooms: await rooms.endEmptyRooms(graceWindowStart(now, roomEndGraceSeconds), now) };
    },

    /** A graceful stop: whoever is still marked connected here has left, and the node is gone. */
    async retireNode(): Promise<void> {
      await repo.leaveNodes({ nodeId }, clock.now());
      await repo.removeNode(nodeId);
    },
  };
}

export type ParticipationService = ReturnType<typeof createParticipationService>;

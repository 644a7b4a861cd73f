// Taking part in a call: join tokens, participants and presence, invites and
// feedback. What presence does to the room (started, ended) follows the rules
// of rooms/room-lifecycle.ts. No transport here: the realtime hub and the page
// routes call this. The node's own part in presence (its registration, the
// presence job, its retirement) is in node-presence.service.ts.
import { createHash } from 'node:crypto';
import type { NetworkReport, Rating } from '../../db/schema.js';
import { NotFoundError, RoomClosedError } from '../../errors.js';
import type { FeedbackService } from '../feedback/feedback.service.js';
import { acceptsParticipants, graceWindowStart } from '../rooms/room-lifecycle.js';
import type { RoomRow } from '../rooms/room-rows.repo.js';
import type { RoomsRepo } from '../rooms/rooms.repo.js';
import type { Clock } from '../support/clock.js';
import type { Ids } from '../support/ids.js';
import { TOKEN_PATTERN } from '../support/ids.js';
import type { TenantsRepo } from '../tenants/tenants.repo.js';
import { nodePresence } from './node-presence.service.js';
import type { ParticipantRow } from './participant-rows.repo.js';
import type { ParticipantsRepo } from './participants.repo.js';

/** A mesh of peer-to-peer connections grows as n²: beyond this a call degrades for everyone. */
export const MAX_PARTICIPANTS = 8;
/** With an SFU each browser uploads once whoever else is in the call (docs/design.md, "Group calls through an SFU"). */
export const MAX_PARTICIPANTS_WITH_SFU = 25;
/** People waiting to be let in at once: a host can read a list this long, and a leaked link cannot flood it. */
export const MAX_WAITING = 20;
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
  /** In the call, or waiting for a host to let it in (docs/design.md, "Waiting room"). */
  admission: 'waiting' | 'admitted';
}

export interface JoinedCall {
  participant: Participant;
  room: RoomRow;
  /** The others in the call when this participant joined, oldest first; empty for one who waits. */
  peers: Participant[];
  /** Who waits to be let in, oldest first: for a host only, empty for everyone else. */
  waiting: Participant[];
  resumed: boolean;
}

export class RoomFullError extends Error {
  constructor(most = MAX_PARTICIPANTS, message = `This call is full (at most ${most} participants)`) {
    super(message);
    this.name = 'RoomFullError';
  }
}

/** The participant was turned away by a host: removed from the call, or denied at the waiting room. */
export class TurnedAwayError extends Error {
  constructor(readonly decision: 'denied' | 'removed') {
    super(decision === 'removed' ? 'The host removed you from this call' : 'The host did not let you in');
    this.name = 'TurnedAwayError';
  }
}

export type AdmitOutcome = { ok: true; participant: Participant } | { ok: false; reason: 'closed' | 'gone' | 'full' };

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
  return {
    token: row.token,
    peerId: peerIdOf(row.token),
    roomId: row.room_id,
    role: row.role,
    name: row.display_name,
    admission: row.admission === 'waiting' ? 'waiting' : 'admitted',
  };
}

/** What a participant may see of the others: one who waits sees nobody, only a host sees who waits. */
function callOf(row: ParticipantRow, peers: ParticipantRow[], waiting: ParticipantRow[]) {
  const admitted = row.admission === 'admitted';
  return { peers: admitted ? peers.map(toParticipant) : [], waiting: admitted && row.role === 'host' ? waiting.map(toParticipant) : [] };
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
  /** People in one call at most: MAX_PARTICIPANTS peer to peer, MAX_PARTICIPANTS_WITH_SFU with an SFU. */
  maxParticipants?: number;
}

export function createParticipationService({ repo, rooms, tenants, feedback, clock, ids, nodeId, roomEndGraceSeconds, nodeDeadAfterSeconds, maxParticipants = MAX_PARTICIPANTS }: Deps) {
  async function resolve(joinToken: string) {
    if (!TOKEN_PATTERN.test(joinToken)) return null;
    return repo.findByJoinToken(joinToken);
  }

  /** A participant connected to the room, by its public id (a room holds a handful: they are matched here). */
  async function findConnected(roomId: number, peerId: string): Promise<Participant | null> {
    return (await repo.connected(roomId)).map(toParticipant).find((p) => p.peerId === peerId) ?? null;
  }

  return {
    ...nodePresence({ repo, rooms, clock, nodeId, roomEndGraceSeconds, nodeDeadAfterSeconds }),
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
        if (resumed.ok) {
          const { participant, room, peers, waiting } = resumed;
          return { participant: toParticipant(participant), room, ...callOf(participant, peers, waiting), resumed: true };
        }
        if (resumed.reason === 'closed') throw new RoomClosedError();
        if (resumed.reason === 'denied' || resumed.reason === 'removed') throw new TurnedAwayError(resumed.reason);
        // Too late, not a participant of this room, or not of this link's role: an ordinary new join.
      }
      // One transaction finds the room by the token, starts it and adds the participant.
      const joined = await repo.join(input.joinToken, now, { inCall: maxParticipants, waiting: MAX_WAITING }, (room, role) => ({
        token: ids.secret(32),
        role,
        display_name: cleanDisplayName(input.displayName, role === 'host' ? (room.host_display_name ?? 'Host') : (room.guest_display_name ?? 'Guest')),
        node_id: nodeId,
      }));
      if (!joined.ok) {
        if (joined.reason === 'not-found') throw new NotFoundError('This join link is not valid');
        throw joined.reason === 'full' ? new RoomFullError(maxParticipants) : new RoomClosedError();
      }
      const { participant, room, peers, waiting } = joined;
      return { participant: toParticipant(participant), room, ...callOf(participant, peers, waiting), resumed: false };
    },

    /**
     * Marks the participant left (if this node still holds it). Returns
     * whether it was in the call or waiting, null when it was not connected here.
     */
    async leave(participantToken: string): Promise<'admitted' | 'waiting' | null> {
      const left = await repo.leave(participantToken, nodeId, clock.now());
      if (!left) return null;
      return left.admission === 'waiting' ? 'waiting' : 'admitted';
    },

    /** The participants of a room connected now, in the call and waiting: what a participant just let in sees. */
    async present(roomId: number): Promise<{ peers: Participant[]; waiting: Participant[] }> {
      const rows = (await repo.connected(roomId)).map(toParticipant);
      return { peers: rows.filter((p) => p.admission === 'admitted'), waiting: rows.filter((p) => p.admission === 'waiting') };
    },

    /** A host lets the waiting participant with this public id in. */
    async admit(roomId: number, peerId: string): Promise<AdmitOutcome> {
      const target = await findConnected(roomId, peerId);
      if (!target || target.admission !== 'waiting') return { ok: false, reason: 'gone' };
      const admitted = await repo.admit(roomId, target.token, clock.now(), maxParticipants);
      return admitted.ok ? { ok: true, participant: toParticipant(admitted.participant) } : admitted;
    },

    /**
     * A host turns away the guest with this public id: denied while it waits,
     * removed from the call once in. The participant, null when there is no
     * such guest connected (it left, or is a host).
     */
    async turnAway(roomId: number, peerId: string, decision: 'denied' | 'removed'): Promise<Participant | null> {
      const target = await findConnected(roomId, peerId);
      if (!target || target.role !== 'guest') return null;
      return (await repo.turnAway(roomId, target.token, decision, clock.now())) ? target : null;
    },

    room: (roomId: number) => repo.findRoom(roomId),

    /** What the participant's browser measured lately (the sessions' network summary, docs/design.md, "Participant sessions"). */
    reportNetwork: (participantToken: string, report: NetworkReport) => repo.recordNetwork(participantToken, report),

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
  };
}

export type ParticipationService = ReturnType<typeof createParticipationService>;

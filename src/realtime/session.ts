// One participant's connection as the hub sees it: what it may still be sent,
// how fast it may send, and how the server ends it. It knows nothing of ws: a
// connection is anything with send() and close().
import { randomBytes } from 'node:crypto';
import type { Participant } from '../domain/participation/participation.service.js';
import type { Clock } from '../domain/support/clock.js';
import type { ErrorCode, ServerMessage } from '../shared/protocol.js';
import { tokenBucket } from './token-bucket.js';

export interface Connection {
  send(message: ServerMessage): void;
  close(code: number, reason: string): void;
}

/**
 * new → joining → joined, or joining → waiting → joined when a host lets it in
 * (docs/design.md, "Waiting room"), and gone from any of them (left, ejected, dropped, replaced, turned away).
 */
export type SessionState = 'new' | 'joining' | 'waiting' | 'joined' | 'gone';

export interface Session {
  id: string;
  connection: Connection;
  state: SessionState;
  participant: Participant | null;
  /** The stream id this participant announced as its screen share, if it shares. */
  sharing: string | null;
  /** Closed by the server (room closed, replaced, left): the close must not count as a drop. */
  ended: boolean;
  allowFrame: () => boolean;
  /** Frames refused for the rate: a connection that spends these too keeps flooding and is closed. */
  allowRefusal: () => boolean;
  allowChat: () => boolean;
  allowNetworkReport: () => boolean;
  failedJoins: number;
  joinTimer: NodeJS.Timeout | null;
  /** Sends fresh TURN credentials while in the call (ice-renewal.ts). */
  iceRenewal: NodeJS.Timeout | null;
}

export function createSession(connection: Connection, clock: Clock): Session {
  return {
    // Never shown to anyone: it only keeps a connection's own messages from coming back to it.
    id: randomBytes(12).toString('base64url'),
    connection,
    state: 'new',
    participant: null,
    sharing: null,
    ended: false,
    allowFrame: tokenBucket(400, 50, clock),
    allowRefusal: tokenBucket(100, 10, clock),
    allowChat: tokenBucket(10, 1, clock),
    // One every 10 s is what the page sends; a few more for the one at leave and a reconnect.
    allowNetworkReport: tokenBucket(3, 0.2, clock),
    failedJoins: 0,
    joinTimer: null,
    iceRenewal: null,
  };
}

/** Sends to this session; a session that is gone only gets the messages that explain why. */
export function reply(session: Session, message: ServerMessage): void {
  if (session.state !== 'gone' || message.type === 'room-closed' || message.type === 'left') session.connection.send(message);
}

/** The error reply of a request (with its requestId) or of a notification (without). */
export function fail(session: Session, code: ErrorCode, message: string, requestId?: string): void {
  reply(session, { type: 'error', code, message, ...(requestId ? { requestId } : {}) });
}

/**
 * The server ends a session: it leaves its room on this node, a later close of
 * its socket does not count as a drop, the socket closes. Only the first call counts.
 */
export function endSession(session: Session, code: number, reason: string, rooms: { leave(session: Session): void }): void {
  if (session.ended) return;
  session.ended = true;
  session.state = 'gone';
  rooms.leave(session);
  session.connection.close(code, reason);
}

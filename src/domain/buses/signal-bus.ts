// Every message from one participant to others goes through a SignalBus, per
// room. The in-process bus (local-signal-bus.ts) serves a single node; a
// cluster swaps in one that crosses nodes (redis-buses.ts, same interface), so
// that participants on different nodes share a call. The hub never writes to
// another participant's socket directly.
import type { ServerMessage } from '../../shared/protocol.js';

/** Sent to a peer id when that participant resumed on a new connection: the old connection closes quietly. */
export interface SessionReplaced {
  type: 'session-replaced';
}

/**
 * Sent to a peer id when a host decided about it (docs/design.md, "Waiting room"): the node that
 * holds its connection lets it into the call, or turns it away and closes it.
 */
export interface HostDecision {
  type: 'host-decision';
  decision: 'admitted' | 'denied' | 'removed';
}

/**
 * Sent to a room by a node whose path to the other nodes is back: every node
 * there sends the room's chat lines it keeps again (realtime/chat-lines.ts).
 */
export interface ChatCatchUp {
  type: 'chat-catch-up';
}

/**
 * A participant's answer to a host's request to record (docs/design.md, "Recording with consent"), sent
 * to the room: the node that holds the request (its host's) counts it (realtime/handlers/recording.ts).
 */
export interface RecordingAnswer {
  type: 'recording-answer';
  askId: string;
  peerId: string;
  accepted: boolean;
  /** When it was given (ISO 8601, the answering node's clock). */
  at: string;
}

/**
 * A participant entered the call (joined, or back after a reload or a drop) in a room that allows recording,
 * sent to the room by its node: the node holding a host's request to record that still waits for this
 * participant's answer asks it again, the same question (realtime/handlers/recording.ts).
 */
export interface RecordingBack {
  type: 'recording-back';
  peerId: string;
}

export interface SignalEnvelope {
  /** The connection that sent it: never delivered back to that connection. */
  fromSession: string;
  /** A peer id, or null for everyone in the room. */
  to: string | null;
  /** Only participants of this role get it (the waiting list goes to hosts). */
  toRole?: 'host';
  message: ServerMessage | SessionReplaced | HostDecision | ChatCatchUp | RecordingAnswer | RecordingBack;
  /** A chat line's own id, the same each time it is sent: a node delivers it once. */
  lineId?: string;
  /** When the sending node sent a chat line first (ms since the epoch, its clock). */
  at?: number;
}

export interface SignalBus {
  publish(roomId: number, envelope: SignalEnvelope): void | Promise<void>;
  /** Returns the unsubscribe function. */
  subscribe(roomId: number, handler: (envelope: SignalEnvelope) => void): () => void;
  /** Called each time a bus that crosses nodes is connected again after losing the other nodes. */
  onReconnected?(listener: () => void): void;
}

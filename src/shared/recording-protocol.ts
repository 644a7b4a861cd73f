// The signaling messages of recording with consent (docs/design.md,
// "Recording with consent"; docs/signaling.md, "Recording with consent").
// Part of the protocol of protocol.ts, kept apart so that each file stays
// small; protocol.ts puts these in its unions and calls the parser below.
// Shared with web/: no Node imports here, and none of protocol.ts (no cycle).

/** How long people have to answer a request to record: whoever has not answered by then counts as declining. */
export const CONSENT_TIMEOUT_MS = 60_000;

// ---- browser -> server ----

export type RecordingClientMessage =
  /** A host asks everyone in the call to agree to be recorded (answered `ack` once they are asked). */
  | { type: 'recording-start'; requestId: string }
  /** A host stops the recording (answered `ack`). */
  | { type: 'recording-stop'; requestId: string }
  /** The answer to `recording-consent-request` `askId` (answered `ack`). */
  | { type: 'recording-consent'; requestId: string; askId: string; accepted: boolean };

// ---- server -> browser ----

/**
 * The room's recording as this participant should show it: `enabled` the
 * room allows recording (its `enable_recording`), `state` idle, asking
 * everyone (a host pressed record) or recording, and `recorded` the peer ids
 * whose media is recorded now (who consented). Sent on entering the call in
 * a room that allows recording or records, and on every change.
 */
export interface RecordingState {
  type: 'recording-state';
  enabled: boolean;
  state: 'idle' | 'asking' | 'recording';
  recorded: string[];
}

export type RecordingServerMessage =
  | RecordingState
  /** Asks this participant to agree to be recorded: `by` is the name of the host who asks. */
  | { type: 'recording-consent-request'; askId: string; by: string }
  /** To hosts: these people did not agree to be recorded (they declined, or did not answer in time). */
  | { type: 'recording-declined'; names: string[] };

/** The error codes of recording: the room does not allow it, this server cannot record (no SFU), or a recording or request is under way. */
export type RecordingErrorCode = 'recording-disabled' | 'recording-unavailable' | 'recording-busy';

const isAskId = (v: unknown): v is string => typeof v === 'string' && /^[A-Za-z0-9_-]{1,64}$/.test(v);

/**
 * Reads a recording message (its `type` starts with `recording-`); the
 * requestId is checked by the caller. A string is the reason it is malformed.
 */
export function parseRecordingMessage(value: Record<string, unknown>, requestId: string): RecordingClientMessage | string {
  switch (value.type) {
    case 'recording-start':
      return { type: 'recording-start', requestId };
    case 'recording-stop':
      return { type: 'recording-stop', requestId };
    case 'recording-consent':
      if (!isAskId(value.askId)) return 'recording-consent needs `askId`, the id of the request it answers';
      if (typeof value.accepted !== 'boolean') return 'accepted must be a boolean';
      return { type: 'recording-consent', requestId, askId: value.askId, accepted: value.accepted };
    default:
      return `Unknown message type "${String(value.type).slice(0, 40)}"`;
  }
}

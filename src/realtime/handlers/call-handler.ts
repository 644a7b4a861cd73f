// The shape of a handler for a message of a session that has joined.
import type { Participant } from '../../domain/participation/participation.service.js';
import type { HubContext } from '../hub-context.js';
import type { ClientMessage, RoomSettings } from '../../shared/protocol.js';
import type { Session } from '../session.js';

/** Every message but `join` and `ping`: only a joined session may send them. */
export type CallMessage = Exclude<ClientMessage, { type: 'join' | 'ping' }>;
export type CallMessageType = CallMessage['type'];

/** Who sent the message, and the settings of their room as this node last read them. */
export interface InCall {
  participant: Participant;
  settings: RoomSettings;
}

/** Handles one message type; its promise settles when the message has been dealt with (a rejection is answered `unavailable`). */
export type CallHandler<T extends CallMessageType = CallMessageType> = (
  ctx: HubContext,
  session: Session,
  message: Extract<CallMessage, { type: T }>,
  call: InCall,
) => void | Promise<void>;

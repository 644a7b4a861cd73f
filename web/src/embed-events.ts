// What the framing page hears of the call and may ask of it (docs/embedding.md):
// the call state's changes (in-call/call-state.ts) told as the documented
// events, and the documented commands carried out by the call page's own
// actions. Only names, roles and states leave the page: never a token, a join
// URL or a peer id (docs/design.md, "Embedding").
import type { ParleyCommandMessage, ParleyLeaveReason } from '../../src/client/embed.js';
import type { PeerInfo } from '../../src/shared/protocol.js';
import type { EmbedBridge } from './embed-bridge.js';
import type { CallChange, CallSnapshot, CallState, EndKind } from './in-call/call-state.js';

/** What the call page does when a command asks (the same as its own buttons). */
export interface EmbedActions {
  setMicrophone(on: boolean): void;
  setCamera(on: boolean): void;
  toggleChat(): void;
  leave(): void;
  decide(peerId: string, decision: 'admit' | 'deny'): void;
}

const LEAVE_REASONS: Record<EndKind, ParleyLeaveReason> = {
  left: 'left',
  removed: 'removed',
  denied: 'denied',
  closed: 'closed',
  // The room is gone, or the same link took this participant's place in another tab: this page's part is over.
  deleted: 'ended',
  replaced: 'ended',
  refused: 'error',
};

const person = (peer: PeerInfo) => ({ role: peer.role, display_name: peer.name });

/** Tells the parent every change of the call that an event documents; returns what stops it. */
export function reportCallToParent(state: CallState, bridge: EmbedBridge): () => void {
  if (!bridge.active) return () => {};
  /** The last status told: the first connection is not news, only losing it and getting it back. */
  let told: 'connected' | 'reconnecting' = 'connected';
  /** Whether this participant was told the call is recorded, and whether it is itself (null: not recording). */
  let recordedTold: boolean | null = null;
  const tell = (change: CallChange, now: Readonly<CallSnapshot>) => {
    switch (change.type) {
      case 'phase':
        if (change.phase === 'waiting') bridge.emit('waiting', {});
        if (change.phase === 'in-call') bridge.emit('join', { role: now.self.role, display_name: now.self.name });
        if (change.phase === 'ended') bridge.emit('leave', { reason: LEAVE_REASONS[now.end ?? 'left'] });
        return;
      case 'participant-joined':
        return bridge.emit('participant_join', person(change.peer));
      case 'participant-left':
        return bridge.emit('participant_leave', person(change.peer));
      case 'knock':
        for (const peer of change.peers) bridge.emit('knock', { display_name: peer.name });
        return;
      case 'connection':
        if (change.status === 'connecting' || change.status === told) return;
        told = change.status;
        return bridge.emit('connection_status_change', { status: change.status });
      case 'microphone':
        return bridge.emit('microphone_toggle', { enabled: now.microphone });
      case 'camera':
        return bridge.emit('camera_toggle', { enabled: now.camera });
      case 'feedback':
        return bridge.emit('feedback', { rating: change.rating });
      case 'recording': {
        const recorded = change.recording.state === 'recording' ? change.recording.recorded.includes(now.self.id ?? '') : null;
        if (recorded === recordedTold) return;
        recordedTold = recorded;
        return recorded === null ? bridge.emit('recording_stopped', {}) : bridge.emit('recording_started', { recorded });
      }
    }
  };
  return state.subscribe(tell);
}

/**
 * Carries out the parent's commands. They act on a participant who joined
 * (in the call, or waiting to be let in: leave, microphone and camera);
 * on the join screen and after the call they do nothing. A host's admit or
 * deny takes the person waiting longest, or the first waiting under that name.
 * `actionsOf`: the call page's actions, asked for once a command acts (the
 * call's screen is built when the page is idle, not for the bridge).
 */
export function obeyParent(state: CallState, bridge: EmbedBridge, actionsOf: () => EmbedActions): void {
  bridge.onCommand((message: ParleyCommandMessage) => {
    const now = state.now;
    if (now.phase !== 'in-call' && now.phase !== 'waiting') return;
    const actions = actionsOf();
    switch (message.command) {
      case 'toggle_microphone':
        return actions.setMicrophone(message.detail?.enabled ?? !now.microphone);
      case 'toggle_camera':
        return actions.setCamera(message.detail?.enabled ?? !now.camera);
      case 'toggle_chat':
        return now.phase === 'in-call' && now.settings.chat ? actions.toggleChat() : undefined;
      case 'leave':
        return actions.leave();
      case 'admit':
      case 'deny': {
        if (now.phase !== 'in-call' || now.self.role !== 'host') return;
        const name = message.detail?.display_name;
        const peer = [...now.knocking.values()].find((p) => name === undefined || p.name === name);
        return peer ? actions.decide(peer.id, message.command) : undefined;
      }
    }
  });
}

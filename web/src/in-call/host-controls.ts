// What a host can do in the call (docs/call.md, "Host controls"): let in or
// turn away who waits (waiting-list.ts, above the pictures), remove a guest
// from the call (the button on the guest's tile), and make an invite link
// (shown in the side column, panels.ts).
import type { PeerInfo } from '../../../src/shared/protocol.js';
import { errorText, t } from '../i18n.js';
import type { Signaling } from '../signaling.js';
import type { CallState } from './call-state.js';
import { chime } from './chime.js';
import type { Controls } from './controls.js';
import type { Panels } from './panels.js';
import type { Stage } from './stage.js';
import { createWaitingList } from './waiting-list.js';

export interface HostControlsOptions {
  state: CallState;
  stage: Pick<Stage, 'say' | 'showWaitingList'>;
  server: Pick<Signaling, 'request'>;
  controls: Pick<Controls, 'setInviteBusy'>;
  panels: Pick<Panels, 'showInvite'>;
}

export type HostControls = ReturnType<typeof createHostControls>;

export function createHostControls(options: HostControlsOptions) {
  const { state, stage, server } = options;
  const waitingList = createWaitingList({
    state,
    decide: async (peerId, decision) => {
      const reply = await server.request({ type: decision, peerId });
      return reply.type === 'error' ? errorText(reply.code) : null;
    },
    say: stage.say,
    chime,
  });
  stage.showWaitingList(waitingList.panel);

  return {
    /** Whether this page may remove the peer from the call: a host, and the peer a guest (the server confirms the role in `joined`). */
    canRemove: (info: PeerInfo) => state.now.self.role === 'host' && info.role === 'guest',

    /** Asks the server to remove the guest; once done, `gone` takes its tile and connection away. */
    async remove(info: PeerInfo, gone: (peerId: string) => void): Promise<void> {
      const reply = await server.request({ type: 'remove', peerId: info.id });
      if (reply.type === 'error') return stage.say(errorText(reply.code));
      gone(info.id);
      stage.say(t('host.removed', { name: info.name }));
    },

    async invite(): Promise<void> {
      options.controls.setInviteBusy(true);
      const reply = await server.request({ type: 'invite-create' });
      options.controls.setInviteBusy(false);
      if (reply.type !== 'invite-created') {
        stage.say(reply.type === 'error' ? errorText(reply.code) : t('invite.failed'));
        return;
      }
      options.panels.showInvite(reply.url);
    },

    /** Admit or Deny for someone waiting, as the list's buttons do. */
    decide: waitingList.decide,
    stop: waitingList.stop,
  };
}

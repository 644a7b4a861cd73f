// The side column (docs/call.md, "Control bar"): the chat (open from the
// start on a wide screen, over the call on a phone) with its unread count,
// the choice of camera, microphone and speaker, and the host's invite link,
// which stays in view once made. One of chat and devices is open at a time.
import { errorText } from '../i18n.js';
import type { Signaling } from '../signaling.js';
import type { CallState } from './call-state.js';
import { createChat } from './chat.js';
import type { Controls } from './controls.js';
import { createDevicesPanel } from './devices-panel.js';
import { createInvitePanel } from './invite-panel.js';
import type { LocalMedia } from './local-media.js';
import type { Stage } from './stage.js';

type Panel = 'chat' | 'devices';

export interface PanelsOptions {
  state: Pick<CallState, 'now'>;
  stage: Pick<Stage, 'say' | 'showSide' | 'setSideOpen'>;
  server: Pick<Signaling, 'request'>;
  controls: Pick<Controls, 'setUnread'>;
  /** The camera and microphone in use, once the call started. */
  media(): LocalMedia | null;
  /** What the side column or the control bar shows has changed. */
  onChange(): void;
}

export type Panels = ReturnType<typeof createPanels>;

export function createPanels(options: PanelsOptions) {
  const { stage } = options;
  let open: Panel | null = window.matchMedia('(min-width: 60rem)').matches ? 'chat' : null;
  let unread = 0;
  const invite = createInvitePanel(stage.say);
  const devices = createDevicesPanel({
    camera: (id) => void options.media()?.useCamera(id),
    microphone: (id) => void options.media()?.useMicrophone(id),
    speaker: (id) => options.media()?.useSpeaker(id),
  });
  const chat = createChat(async (message, messageId) => {
    const reply = await options.server.request({ type: 'chat', text: message, messageId });
    // Not sent for want of a path between the nodes: the line itself says so and offers Retry; other refusals say why.
    if (reply.type === 'error' && reply.code !== 'unavailable') stage.say(errorText(reply.code));
    return reply.type === 'ack';
  });

  function refreshDevices() {
    const media = options.media();
    if (media) void devices.refresh(media.current());
  }

  return {
    /** Opens the panel, or closes it if it is open. */
    toggle(panel: Panel) {
      open = open === panel ? null : panel;
      if (open === 'chat') {
        unread = 0;
        options.controls.setUnread(0);
      }
      if (open === 'devices') refreshDevices();
      options.onChange();
      if (open === 'chat') document.getElementById('chat-input')?.focus();
    },

    /**
     * Places the side column for what the participant may do now, and returns
     * the panel that shows. The chosen panel stays chosen while the room has no
     * chat (or the participant waits), and shows once it has.
     */
    render(allowed: { chat: boolean; invite: boolean }): Panel | null {
      const shown = open === 'chat' && !allowed.chat ? null : open;
      const link = allowed.invite && invite.hasLink();
      stage.showSide(...(link ? [invite.panel] : []), ...(shown === 'chat' ? [chat.panel] : shown === 'devices' ? [devices.panel] : []));
      stage.setSideOpen(shown !== null || link);
      return shown;
    },

    chatMessage(message: Parameters<typeof chat.append>[0]) {
      chat.append(message);
      if (open !== 'chat' || !options.state.now.settings.chat) options.controls.setUnread(++unread);
    },

    /** The host's new invite link: shown, and focused to copy. */
    showInvite(url: string) {
      invite.show(url);
      options.onChange();
      invite.focus();
    },

    /** The devices changed (a switch, a new one plugged in): the choice lists them again. */
    refreshDevices,
  };
}

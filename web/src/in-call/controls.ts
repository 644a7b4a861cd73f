// The control bar: microphone, camera, screen sharing, invite and leave.
// The buttons only report clicks; what they do is the call's business.
import { h } from '../dom.js';
import { t } from '../i18n.js';

export interface ControlActions {
  toggleAudio(): void;
  toggleVideo(): void;
  toggleScreen(): void;
  invite(): void;
  leave(): void;
}

export interface ControlsState {
  audioOn: boolean;
  videoOn: boolean;
  hasAudio: boolean;
  hasVideo: boolean;
  /** The room allows screen sharing and the browser can. */
  canShare: boolean;
  /** The room allows invites and this participant is the host. */
  canInvite: boolean;
}

export interface Controls {
  /** The buttons to show for `state`, in bar order. */
  render(state: ControlsState): HTMLElement[];
  setSharing(sharing: boolean): void;
  setInviteBusy(busy: boolean): void;
  setLeaving(): void;
}

export function createControls(actions: ControlActions): Controls {
  const mute = h('button', { type: 'button', 'data-testid': 'mute-button', onclick: () => actions.toggleAudio() });
  const camera = h('button', { type: 'button', 'data-testid': 'camera-button', onclick: () => actions.toggleVideo() });
  const screen = h('button', { type: 'button', 'data-testid': 'screenshare-button', 'aria-pressed': 'false', onclick: () => actions.toggleScreen() }, t('call.shareScreen'));
  const invite = h('button', { type: 'button', 'data-testid': 'invite-button', onclick: () => actions.invite() }, t('call.invite'));
  const leave = h('button', { type: 'button', class: 'danger', 'data-testid': 'leave-button', onclick: () => actions.leave() }, t('call.leave'));

  return {
    render: (state) => {
      mute.textContent = state.audioOn ? t('call.mute') : t('call.unmute');
      mute.setAttribute('aria-pressed', String(!state.audioOn));
      mute.disabled = !state.hasAudio;
      camera.textContent = state.videoOn ? t('call.cameraOff') : t('call.cameraOn');
      camera.setAttribute('aria-pressed', String(!state.videoOn));
      camera.disabled = !state.hasVideo;
      return [mute, camera, ...(state.canShare ? [screen] : []), ...(state.canInvite ? [invite] : []), leave];
    },
    setSharing: (sharing) => {
      screen.textContent = sharing ? t('call.stopSharing') : t('call.shareScreen');
      screen.setAttribute('aria-pressed', String(sharing));
    },
    setInviteBusy: (busy) => {
      invite.disabled = busy;
    },
    setLeaving: () => {
      leave.disabled = true;
    },
  };
}

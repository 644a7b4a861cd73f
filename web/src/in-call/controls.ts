// The control bar: microphone, camera, screen sharing, invite and leave.
// The buttons only report clicks; what they do is the call's business.
import { h } from '../dom.js';
import { text } from './strings.js';

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
  const screen = h('button', { type: 'button', 'data-testid': 'screenshare-button', 'aria-pressed': 'false', onclick: () => actions.toggleScreen() }, text.shareScreen);
  const invite = h('button', { type: 'button', 'data-testid': 'invite-button', onclick: () => actions.invite() }, text.invite);
  const leave = h('button', { type: 'button', class: 'danger', 'data-testid': 'leave-button', onclick: () => actions.leave() }, text.leave);

  return {
    render: (state) => {
      mute.textContent = state.audioOn ? text.mute : text.unmute;
      mute.setAttribute('aria-pressed', String(!state.audioOn));
      mute.disabled = !state.hasAudio;
      camera.textContent = state.videoOn ? text.cameraOff : text.cameraOn;
      camera.setAttribute('aria-pressed', String(!state.videoOn));
      camera.disabled = !state.hasVideo;
      return [mute, camera, ...(state.canShare ? [screen] : []), ...(state.canInvite ? [invite] : []), leave];
    },
    setSharing: (sharing) => {
      screen.textContent = sharing ? text.stopSharing : text.shareScreen;
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

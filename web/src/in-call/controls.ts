// The control bar: microphone, camera, switching camera, screen sharing,
// invite, chat (with its unread count), devices, full screen and leave. Each
// button has an icon and a text label. The buttons only report clicks; what
// they do is the call's business.
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { icon, type IconName } from './icons.js';

export interface ControlActions {
  toggleAudio(): void;
  toggleVideo(): void;
  switchCamera(): void;
  toggleScreen(): void;
  invite(): void;
  toggleChat(): void;
  toggleDevices(): void;
  toggleFullscreen(): void;
  /** The host's record button: start (asks everyone) or stop the recording. */
  toggleRecording(): void;
  leave(): void;
}

export interface ControlsState {
  audioOn: boolean;
  videoOn: boolean;
  hasAudio: boolean;
  hasVideo: boolean;
  /** More than one camera (a phone's front and back). */
  canSwitchCamera: boolean;
  /** The room allows screen sharing and the browser can. */
  canShare: boolean;
  /** The room allows invites and this participant is the host. */
  canInvite: boolean;
  /** The room has chat (and this participant is in the call). */
  canChat: boolean;
  chatOpen: boolean;
  devicesOpen: boolean;
  fullscreen: boolean;
  /** The host's record button, in a room that allows recording (null: none), and the recording's state. */
  recording: 'idle' | 'asking' | 'recording' | null;
}

export interface Controls {
  /** The buttons to show for `state`, in bar order. */
  render(state: ControlsState): HTMLElement[];
  setSharing(sharing: boolean): void;
  setInviteBusy(busy: boolean): void;
  /** Messages that arrived while the chat was closed (0 hides the badge). */
  setUnread(count: number): void;
  setLeaving(): void;
}

function button(testId: string, onclick: () => void, className?: string) {
  const label = h('span', { class: 'label' });
  const element = h('button', { type: 'button', 'data-testid': testId, ...(className ? { class: className } : {}), onclick });
  let shown = '';
  return {
    element,
    set(name: IconName, text: string) {
      // The bar is rendered again on every change of state: a button that shows the same keeps its elements.
      if (shown === `${name} ${text}`) return;
      shown = `${name} ${text}`;
      label.textContent = text;
      element.replaceChildren(icon(name), label, ...[...element.children].filter((c) => c.classList.contains('badge')));
    },
  };
}

export function createControls(actions: ControlActions): Controls {
  const mute = button('mute-button', () => actions.toggleAudio());
  const camera = button('camera-button', () => actions.toggleVideo());
  const switchCamera = button('switch-camera-button', () => actions.switchCamera());
  switchCamera.set('switchCamera', t('call.switchCamera'));
  const screen = button('screenshare-button', () => actions.toggleScreen());
  screen.set('screen', t('call.shareScreen'));
  screen.element.setAttribute('aria-pressed', 'false');
  const invite = button('invite-button', () => actions.invite());
  invite.set('invite', t('call.invite'));
  const chat = button('chat-button', () => actions.toggleChat());
  chat.set('chat', t('chat.title'));
  const badge = h('span', { class: 'badge', 'data-testid': 'chat-unread', 'aria-hidden': 'true', hidden: true });
  chat.element.append(badge);
  const devices = button('devices-button', () => actions.toggleDevices());
  devices.set('devices', t('call.devices'));
  const fullscreen = button('fullscreen-button', () => actions.toggleFullscreen());
  const record = button('record-button', () => actions.toggleRecording(), 'record');
  const leave = button('leave-button', () => actions.leave(), 'danger');
  leave.set('leave', t('call.leave'));

  return {
    render: (state) => {
      mute.set(state.audioOn ? 'mic' : 'micOff', state.audioOn ? t('call.mute') : t('call.unmute'));
      mute.element.setAttribute('aria-pressed', String(!state.audioOn));
      mute.element.disabled = !state.hasAudio;
      camera.set(state.videoOn ? 'camera' : 'cameraOff', state.videoOn ? t('call.cameraOff') : t('call.cameraOn'));
      camera.element.setAttribute('aria-pressed', String(!state.videoOn));
      camera.element.disabled = !state.hasVideo;
      chat.element.setAttribute('aria-expanded', String(state.chatOpen));
      devices.element.setAttribute('aria-expanded', String(state.devicesOpen));
      fullscreen.set(state.fullscreen ? 'exitFullscreen' : 'fullscreen', state.fullscreen ? t('call.exitFullscreen') : t('call.fullscreen'));
      const canFullscreen = typeof document.documentElement.requestFullscreen === 'function';
      if (state.recording) {
        record.set(state.recording === 'recording' ? 'recordStop' : 'record', t(state.recording === 'recording' ? 'recording.stop' : state.recording === 'asking' ? 'recording.asking' : 'recording.start'));
        record.element.setAttribute('aria-pressed', String(state.recording === 'recording'));
        record.element.dataset.state = state.recording;
        // Asking: everyone is answering; the button is pressed again once they have.
        record.element.disabled = state.recording === 'asking';
      }
      return [
        mute.element,
        camera.element,
        ...(state.canSwitchCamera ? [switchCamera.element] : []),
        ...(state.canShare ? [screen.element] : []),
        ...(state.canInvite ? [invite.element] : []),
        ...(state.recording ? [record.element] : []),
        ...(state.canChat ? [chat.element] : []),
        devices.element,
        ...(canFullscreen ? [fullscreen.element] : []),
        leave.element,
      ];
    },
    setSharing: (sharing) => {
      screen.set('screen', sharing ? t('call.stopSharing') : t('call.shareScreen'));
      screen.element.setAttribute('aria-pressed', String(sharing));
    },
    setInviteBusy: (busy) => {
      invite.element.disabled = busy;
    },
    setUnread: (count) => {
      badge.hidden = count === 0;
      badge.textContent = count > 0 ? String(count) : '';
      // Said with the button's name: "Chat, 2 unread".
      if (count > 0) chat.element.setAttribute('aria-label', `${t('chat.title')}, ${t('chat.unread', { count })}`);
      else chat.element.removeAttribute('aria-label');
    },
    setLeaving: () => {
      leave.element.disabled = true;
    },
  };
}

// The join screen: room name, camera preview, microphone level (always),
// device choice, the check of speaker and network, display name, Join.
// Resolves with the chosen name and media.
import { fillDeviceSelect } from './device-select.js';
import { h, show } from './dom.js';
import { t } from './i18n.js';
import { bindMeter } from './meter.js';
import { getLocalMedia, listDevices, stopStream, type DeviceChoice, type LocalMedia } from './media.js';

export interface PrejoinResult {
  name: string;
  media: LocalMedia;
  /** The camera preview, playing `media.stream`: the call's own tile takes it over (in-call/local-tile.ts). */
  preview: HTMLVideoElement;
}

export function showPrejoin(
  root: Element,
  options: {
    roomName: string;
    displayName: string;
    check: HTMLElement;
    /** Each new preview stream (the first, and after a device change): what Join will send, to prepare for. */
    onStream?(stream: MediaStream): void;
  },
): Promise<PrejoinResult> {
  return new Promise((resolve) => {
    let media: LocalMedia = { stream: new MediaStream(), problem: null };
    let unbindMeter = () => {};
    const choice: DeviceChoice = {};
    /** The latest acquisition: Join waits for it, so the call starts with the chosen devices. */
    let ready: Promise<void> = Promise.resolve();

    const video = h('video', { 'data-testid': 'local-video', autoplay: true, muted: true, playsinline: true, 'aria-label': t('join.cameraPreview') });
    video.muted = true;
    const meter = h('meter', { 'data-testid': 'audio-indicator', min: 0, max: 1, value: 0, 'aria-label': t('join.microphoneLevel') });
    const problem = h('p', { class: 'notice', role: 'status' });
    const nameInput = h('input', {
      id: 'name',
      'data-testid': 'name-input',
      type: 'text',
      autocomplete: 'name',
      maxlength: 100,
      required: true,
      value: options.displayName,
    });
    const cameraSelect = h('select', { id: 'camera', onchange: () => void pick({ videoId: cameraSelect.value }) });
    const micSelect = h('select', { id: 'microphone', onchange: () => void pick({ audioId: micSelect.value }) });
    const joinButton = h('button', { type: 'submit', class: 'primary', 'data-testid': 'join-button' }, t('join.join'));

    async function acquire() {
      stopStream(media.stream);
      unbindMeter();
      media = await getLocalMedia(choice);
      options.onStream?.(media.stream);
      video.srcObject = media.stream;
      unbindMeter = bindMeter(meter, media.stream);
      problem.textContent = media.problem ?? '';
      const devices = await listDevices();
      fillDeviceSelect(cameraSelect, devices.video, media.stream.getVideoTracks()[0]?.getSettings().deviceId, t('join.noCamera'));
      fillDeviceSelect(micSelect, devices.audio, media.stream.getAudioTracks()[0]?.getSettings().deviceId, t('join.noMicrophone'));
    }

    async function pick(change: DeviceChoice) {
      Object.assign(choice, change);
      ready = acquire();
      await ready;
    }

    const form = h(
      'form',
      {
        class: 'card prejoin',
        onsubmit: (event) => {
          event.preventDefault();
          const name = nameInput.value.trim();
          if (!name) {
            problem.textContent = t('join.nameMissing');
            nameInput.focus();
            return;
          }
          joinButton.disabled = true;
          joinButton.textContent = t('join.joining');
          void ready.then(() => {
            unbindMeter();
            resolve({ name, media, preview: video });
          });
        },
      },
      h('h1', { class: 'room-name' }, options.roomName),
      h('div', { class: 'preview' }, video, meter),
      problem,
      options.check,
      h('label', { for: 'name' }, t('join.name')),
      nameInput,
      h('div', { class: 'devices' }, h('div', {}, h('label', { for: 'camera' }, t('join.camera')), cameraSelect), h('div', {}, h('label', { for: 'microphone' }, t('join.microphone')), micSelect)),
      joinButton,
    );
    show(root, form);
    if (!nameInput.value) nameInput.focus();
    else joinButton.focus();
    ready = acquire();
  });
}

// Choosing camera, microphone and speaker during the call. The speaker can be
// chosen only where the browser lets a page route its sound
// (HTMLMediaElement.setSinkId: Chromium, and Firefox behind a setting).
import { fillDeviceSelect } from '../device-select.js';
import { h } from '../dom.js';
import { t } from '../i18n.js';
import { listDevices } from '../media.js';

export interface DevicesPanel {
  panel: HTMLElement;
  /** Reads the devices again (labels are known once permission was given). */
  refresh(current: { camera?: string; microphone?: string; speaker?: string }): Promise<void>;
}

export interface DeviceChoices {
  camera(deviceId: string): void;
  microphone(deviceId: string): void;
  speaker(deviceId: string): void;
}

export const canChooseSpeaker = () => typeof (HTMLMediaElement.prototype as { setSinkId?: unknown }).setSinkId === 'function';

export function createDevicesPanel(choose: DeviceChoices): DevicesPanel {
  const select = (id: string, onchange: (value: string) => void) => {
    const element: HTMLSelectElement = h('select', { id, 'data-testid': id, onchange: () => onchange(element.value) });
    return element;
  };
  const camera = select('camera-select', choose.camera);
  const microphone = select('microphone-select', choose.microphone);
  const speaker = select('speaker-select', choose.speaker);
  const field = (element: HTMLSelectElement, label: string) => h('div', {}, h('label', { for: element.id }, label), element);
  const panel = h(
    'section',
    { class: 'devices-panel', 'aria-labelledby': 'devices-title' },
    h('h2', { id: 'devices-title' }, t('devices.title')),
    field(camera, t('join.camera')),
    field(microphone, t('join.microphone')),
    canChooseSpeaker() ? field(speaker, t('devices.speaker')) : null,
  );

  return {
    panel,
    async refresh(current) {
      const devices = await listDevices();
      fillDeviceSelect(camera, devices.video, current.camera, t('join.noCamera'));
      fillDeviceSelect(microphone, devices.audio, current.microphone, t('join.noMicrophone'));
      fillDeviceSelect(speaker, devices.output, current.speaker ?? 'default', t('devices.default'));
    },
  };
}

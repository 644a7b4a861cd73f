// A <select> of cameras, microphones or speakers, shared by the join screen
// and the call's devices panel: each device by its label (or "Device n"
// before permission gives labels), the current one selected, and a disabled
// "none" when there is none.
import { h } from './dom.js';
import { t } from './i18n.js';

export function fillDeviceSelect(select: HTMLSelectElement, devices: MediaDeviceInfo[], currentId: string | undefined, none: string): void {
  select.replaceChildren(
    ...(devices.length
      ? devices.map((d, i) => h('option', { value: d.deviceId, selected: d.deviceId === currentId }, d.label || t('join.device', { number: i + 1 })))
      : [h('option', { value: '' }, none)]),
  );
  select.disabled = devices.length === 0;
}

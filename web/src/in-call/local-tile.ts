// The participant's own tile: their camera (muted, so they never hear
// themselves), their name and, where the room shows it, their level meter.
import { h } from '../dom.js';
import { bindMeter } from '../meter.js';
import type { Stage } from './stage.js';
import { t } from '../i18n.js';

export interface LocalTile {
  /** Moves the join screen's preview into the tile (call it just before the call's screen shows). */
  takePreview(): void;
  setName(name: string): void;
  setCameraOff(off: boolean): void;
  showMeter(on: boolean): void;
  /** Reads the level of the microphone the stream has now (after a switch). */
  rebindMeter(): void;
  /** Stops reading the microphone's level. */
  stop(): void;
}

/**
 * `preview`, the join screen's video element playing `stream`, is moved into
 * the tile rather than replaced: a new element would start a second media
 * player at the click, and one's own picture would go black and start over.
 * It stays where it plays until takePreview(), just before the call's screen
 * replaces the join screen: moved in the same task, it never stops playing.
 */
export function createLocalTile(stage: Stage, name: string, stream: MediaStream, preview?: HTMLVideoElement): LocalTile {
  const video = preview ?? h('video', { 'data-testid': 'local-video', autoplay: true, muted: true, playsinline: true });
  video.setAttribute('aria-label', t('call.yourCamera'));
  // The attribute alone does not mute a video element created by script.
  video.muted = true;
  if (video.srcObject !== stream) video.srcObject = stream;
  const meter = h('meter', { 'data-testid': 'call-audio-indicator', min: 0, max: 1, value: 0, 'aria-label': t('call.yourMicrophoneLevel') });
  const caption = h('figcaption', {}, t('call.self', { name: name }));
  const tile = h('figure', { class: 'tile self' }, preview ? null : video, caption, meter);
  stage.addTile(tile);
  let stop = bindMeter(meter, stream);
  return {
    takePreview: () => {
      if (!tile.contains(video)) tile.prepend(video);
    },
    setName: (newName) => {
      caption.textContent = t('call.self', { name: newName });
    },
    setCameraOff: (off) => tile.classList.toggle('camera-off', off),
    showMeter: (on) => {
      meter.hidden = !on;
      if (!on) meter.remove();
      else if (!meter.isConnected) tile.append(meter);
    },
    rebindMeter: () => {
      stop();
      stop = bindMeter(meter, stream);
    },
    stop: () => stop(),
  };
}

// A short, soft two-note sound that asks for attention without alarming
// (someone is waiting). Made with Web Audio: no sound file to download. The
// page has had a click (Join) before the call starts, so browsers allow it.
import { audioContext } from '../meter.js';

export function chime(): void {
  try {
    const context = audioContext();
    const start = context.currentTime;
    for (const [i, frequency] of [660, 880].entries()) {
      const oscillator = context.createOscillator();
      const gain = context.createGain();
      oscillator.type = 'sine';
      oscillator.frequency.value = frequency;
      const at = start + i * 0.18;
      gain.gain.setValueAtTime(0.0001, at);
      gain.gain.exponentialRampToValueAtTime(0.2, at + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, at + 0.35);
      oscillator.connect(gain).connect(context.destination);
      oscillator.start(at);
      oscillator.stop(at + 0.4);
    }
  } catch {
    // No audio output (or no Web Audio): the title and the status line still tell.
  }
}

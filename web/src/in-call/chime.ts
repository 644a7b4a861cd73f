// Short, soft tones made with Web Audio (no sound file to download): the
// chime that someone is waiting, and the join screen's speaker test. The page
// has had a click (Join, or the test button) first, so browsers allow them.
import { audioContext } from '../meter.js';

/** Plays `notes` (frequencies in Hz) one after the other, `step` seconds apart. */
export function playTones(notes: number[], step = 0.18): void {
  try {
    const context = audioContext();
    const start = context.currentTime;
    for (const [i, frequency] of notes.entries()) {
      const oscillator = context.createOscillator();
      const gain = context.createGain();
      oscillator.type = 'sine';
      oscillator.frequency.value = frequency;
      const at = start + i * step;
      gain.gain.setValueAtTime(0.0001, at);
      gain.gain.exponentialRampToValueAtTime(0.25, at + 0.02);
      gain.gain.exponentialRampToValueAtTime(0.0001, at + step + 0.15);
      oscillator.connect(gain).connect(context.destination);
      oscillator.start(at);
      oscillator.stop(at + step + 0.2);
    }
  } catch {
    // No audio output (or no Web Audio): the title and the status line still tell.
  }
}

/** Someone is waiting to be let in. */
export const chime = () => playTones([660, 880]);

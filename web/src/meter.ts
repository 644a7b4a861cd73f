// A microphone level from a MediaStream (Web Audio AnalyserNode), polled:
// level() is the RMS of the latest samples, 0..1.
let context: AudioContext | null = null;

export function audioContext(): AudioContext {
  context ??= new AudioContext();
  // Started by a user gesture or the autoplay policy; resuming is harmless otherwise.
  if (context.state === 'suspended') void context.resume().catch(() => {});
  return context;
}

export interface LevelMeter {
  level(): number;
  stop(): void;
}

export function levelMeter(stream: MediaStream): LevelMeter | null {
  if (stream.getAudioTracks().length === 0) return null;
  const ctx = audioContext();
  const source = ctx.createMediaStreamSource(stream);
  const analyser = ctx.createAnalyser();
  analyser.fftSize = 512;
  source.connect(analyser);
  const samples = new Float32Array(analyser.fftSize);
  return {
    level() {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (const s of samples) sum += s * s;
      return Math.min(1, Math.sqrt(sum / samples.length) * 3);
    },
    stop() {
      source.disconnect();
    },
  };
}

/** Drives a <meter> (or anything with a value) from a stream until stopped. */
export function bindMeter(element: HTMLMeterElement, stream: MediaStream | null): () => void {
  const meter = stream ? levelMeter(stream) : null;
  element.value = 0;
  if (!meter) return () => {};
  const timer = setInterval(() => {
    element.value = meter.level();
  }, 100);
  return () => {
    clearInterval(timer);
    meter.stop();
  };
}

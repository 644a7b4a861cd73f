// The participant's own camera and microphone during the call: switching to
// another device (or a phone's other camera) replaces the track that is
// sent, on every connection at once and without renegotiating, and keeps it
// muted or off if it was. Sound goes out through the chosen speaker.
import type { Mesh } from '../mesh.js';
import { listDevices, openTrack } from '../media.js';

export interface LocalMedia {
  /** Whether there is another camera to switch to (a phone's front and back). */
  canSwitchCamera(): boolean;
  /** The devices in use, for the device panel. */
  current(): { camera?: string; microphone?: string; speaker?: string };
  useCamera(deviceId: string): Promise<boolean>;
  useMicrophone(deviceId: string): Promise<boolean>;
  /** The other-facing camera on a phone, else the next camera. */
  switchCamera(): Promise<boolean>;
  useSpeaker(deviceId: string): void;
  /** Counts the cameras again (labels and devices appear once permission was given). */
  refresh(): Promise<void>;
}

export function createLocalMedia(stream: MediaStream, deps: { mesh: Pick<Mesh, 'replaceTrack'>; onTrackChanged(kind: 'audio' | 'video'): void; onSpeaker(deviceId: string): void }): LocalMedia {
  let cameras: string[] = [];
  let speaker: string | undefined;
  let facing: 'user' | 'environment' = 'user';

  const trackOf = (kind: 'audio' | 'video') => (kind === 'audio' ? stream.getAudioTracks()[0] : stream.getVideoTracks()[0]);

  async function replace(kind: 'audio' | 'video', next: MediaStreamTrack | null): Promise<boolean> {
    const previous = trackOf(kind);
    // Without a track of this kind at the start there is no sender to give it to.
    if (!next || !previous) {
      next?.stop();
      return false;
    }
    next.enabled = previous.enabled;
    await deps.mesh.replaceTrack(previous, next);
    stream.removeTrack(previous);
    stream.addTrack(next);
    previous.stop();
    deps.onTrackChanged(kind);
    return true;
  }

  return {
    canSwitchCamera: () => cameras.length > 1,
    current: () => ({ camera: trackOf('video')?.getSettings().deviceId, microphone: trackOf('audio')?.getSettings().deviceId, speaker }),
    // The old camera is released first: many phones cannot open two at once.
    useCamera: async (deviceId) => {
      const before = trackOf('video')?.getSettings().deviceId;
      trackOf('video')?.stop();
      const next = (await openTrack('video', { deviceId })) ?? (before ? await openTrack('video', { deviceId: before }) : null);
      return replace('video', next);
    },
    useMicrophone: async (deviceId) => replace('audio', await openTrack('audio', { deviceId })),
    switchCamera: async () => {
      const wanted = facing === 'user' ? 'environment' : 'user';
      trackOf('video')?.stop();
      let next = await openTrack('video', { facingMode: wanted });
      if (next) facing = wanted;
      else {
        // No facing mode (a laptop with two cameras): the next one in the list.
        const now = trackOf('video')?.getSettings().deviceId;
        const after = cameras[(cameras.indexOf(now ?? '') + 1) % cameras.length];
        next = after ? await openTrack('video', { deviceId: after }) : null;
      }
      return replace('video', next);
    },
    useSpeaker: (deviceId) => {
      speaker = deviceId;
      deps.onSpeaker(deviceId);
    },
    refresh: async () => {
      cameras = (await listDevices()).video.map((d) => d.deviceId);
    },
  };
}

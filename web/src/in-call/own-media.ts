// This participant's own media during the call: their tile (local-tile.ts),
// the microphone and camera as the call state turns them on and off (the
// tracks enabled or not, and the others told), and the devices in use
// (local-media.ts: switching camera or microphone, the speaker).
import { stopStream } from '../media.js';
import type { Mesh } from '../mesh.js';
import type { Signaling } from '../signaling.js';
import type { CallState } from './call-state.js';
import { createLocalMedia } from './local-media.js';
import { createLocalTile } from './local-tile.js';
import type { Stage } from './stage.js';

export interface OwnMediaOptions {
  state: CallState;
  stage: Stage;
  stream: MediaStream;
  /** The join screen's camera preview, playing `stream`, for the call's own tile. */
  preview?: HTMLVideoElement;
  mesh: Pick<Mesh, 'replaceTrack'>;
  signaling: Pick<Signaling, 'send'>;
  /** The camera or microphone changed: the devices panel lists them again. */
  onDevicesChanged(): void;
  /** The speaker chosen for everyone's sound. */
  onSpeaker(deviceId: string): void;
  /** Whether a camera can be switched to changed. */
  onCamerasCounted(): void;
}

export function startOwnMedia(options: OwnMediaOptions) {
  const { state, stream } = options;
  const self = createLocalTile(options.stage, state.now.self.name, stream, options.preview);
  const devices = createLocalMedia(stream, {
    mesh: options.mesh,
    onTrackChanged: (kind) => {
      if (kind === 'audio') self.rebindMeter();
      options.onDevicesChanged();
    },
    onSpeaker: options.onSpeaker,
  });
  void devices.refresh().then(options.onCamerasCounted);

  /** What the others are told of this participant's media; nobody is told while it waits. */
  function announce() {
    const now = state.now;
    if (now.phase !== 'waiting') options.signaling.send({ type: 'media-state', audio: now.microphone, video: now.camera });
  }

  // Someone waiting sees their own level meter whatever the room's setting, to check their microphone.
  const showMeter = () => self.showMeter(state.now.phase === 'waiting' || state.now.settings.audioIndicator);
  showMeter();

  const unsubscribe = state.subscribe((change, now) => {
    switch (change.type) {
      case 'microphone':
        for (const track of stream.getAudioTracks()) track.enabled = change.on;
        return announce();
      case 'camera':
        for (const track of stream.getVideoTracks()) track.enabled = change.on;
        self.setCameraOff(!change.on);
        return announce();
      case 'phase':
        if (now.phase !== 'waiting' && now.phase !== 'in-call') return;
        // The name as the server confirmed it.
        self.setName(now.self.name);
        return showMeter();
      case 'settings':
        return showMeter();
    }
  });

  return {
    devices,
    announce,
    /** Moves the join screen's preview into the own tile (just before the call's screen shows). */
    takePreview: self.takePreview,
    stop() {
      unsubscribe();
      stopStream(stream);
      self.stop();
    },
  };
}

// The participant's own camera and microphone. Every failure becomes a
// message the person can act on, and joining still works with whatever is
// left: audio only, video only, or nothing at all.
import { t } from './i18n.js';

export interface LocalMedia {
  stream: MediaStream;
  /** Shown on the join screen when something is missing; null when all is well. */
  problem: string | null;
}

export interface DeviceChoice {
  audioId?: string;
  videoId?: string;
}

function constraint(id: string | undefined): MediaTrackConstraints | boolean {
  return id ? { deviceId: { exact: id } } : true;
}

async function tryGet(audio: MediaTrackConstraints | boolean, video: MediaTrackConstraints | boolean): Promise<MediaStream | Error> {
  try {
    return await navigator.mediaDevices.getUserMedia({ audio, video });
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

export async function getLocalMedia(choice: DeviceChoice = {}): Promise<LocalMedia> {
  if (!navigator.mediaDevices?.getUserMedia) {
    return { stream: new MediaStream(), problem: t('media.unsupported') };
  }
  const audio = constraint(choice.audioId);
  const video = constraint(choice.videoId);
  const both = await tryGet(audio, video);
  if (both instanceof MediaStream) return { stream: both, problem: null };
  if (both.name === 'NotAllowedError' || both.name === 'SecurityError') {
    return {
      stream: new MediaStream(),
      problem: t('media.blocked'),
    };
  }
  // One of the two is missing or busy: take what there is.
  const audioOnly = await tryGet(audio, false);
  if (audioOnly instanceof MediaStream) return { stream: audioOnly, problem: t('media.noCamera') };
  const videoOnly = await tryGet(false, video);
  if (videoOnly instanceof MediaStream) return { stream: videoOnly, problem: t('media.noMicrophone') };
  return { stream: new MediaStream(), problem: t('media.none') };
}

export async function listDevices(): Promise<{ audio: MediaDeviceInfo[]; video: MediaDeviceInfo[]; output: MediaDeviceInfo[] }> {
  const devices = navigator.mediaDevices?.enumerateDevices ? await navigator.mediaDevices.enumerateDevices() : [];
  return {
    audio: devices.filter((d) => d.kind === 'audioinput' && d.deviceId),
    video: devices.filter((d) => d.kind === 'videoinput' && d.deviceId),
    output: devices.filter((d) => d.kind === 'audiooutput' && d.deviceId),
  };
}

/**
 * A new track from one device (or the other-facing camera of a phone), with
 * the same constraints as the call's; null when the device cannot be opened.
 */
export async function openTrack(kind: 'audio' | 'video', choice: { deviceId?: string; facingMode?: 'user' | 'environment' }): Promise<MediaStreamTrack | null> {
  const constraints: MediaTrackConstraints = choice.deviceId ? { deviceId: { exact: choice.deviceId } } : { facingMode: { exact: choice.facingMode! } };
  try {
    const stream = await navigator.mediaDevices.getUserMedia(kind === 'audio' ? { audio: constraints } : { video: constraints });
    return stream.getTracks()[0] ?? null;
  } catch {
    return null;
  }
}

export function stopStream(stream: MediaStream | null): void {
  for (const track of stream?.getTracks() ?? []) track.stop();
}

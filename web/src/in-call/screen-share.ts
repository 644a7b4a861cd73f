// Sharing this participant's screen: the browser's picker, the announcement
// that tells the others which stream is a screen (sent before its tracks, so
// they never show it as a camera), and stopping from the button, the
// browser's own "stop sharing" or a room setting.
import type { ServerMessage } from '../../../src/shared/protocol.js';
import { stopStream } from '../media.js';
import type { Mesh } from '../mesh.js';
import { errorText, t } from '../i18n.js';

export interface ScreenShareOptions {
  request(message: { type: 'screenshare-start'; streamId: string }): Promise<ServerMessage>;
  tellStopped(): void;
  mesh: Pick<Mesh, 'addTracks' | 'removeTracks'>;
  say(message: string): void;
  onSharing(sharing: boolean): void;
}

export interface ScreenShare {
  toggle(): Promise<void>;
  /** Stops sharing; `tell` the others unless they are gone or told already. */
  stop(tell: boolean): void;
  /** Announces the screen again (to a newcomer, after a reconnection) while sharing. */
  announceAgain(): Promise<void>;
  active(): boolean;
}

export function createScreenShare(options: ScreenShareOptions): ScreenShare {
  let screen: MediaStream | null = null;

  async function announce(shared: MediaStream): Promise<boolean> {
    const reply = await options.request({ type: 'screenshare-start', streamId: shared.id });
    if (reply.type !== 'ack') {
      options.say(reply.type === 'error' ? errorText(reply.code) : t('call.screenNotPossible'));
      stop(false);
      return false;
    }
    return true;
  }

  function stop(tell: boolean) {
    if (!screen) return;
    options.mesh.removeTracks(screen);
    stopStream(screen);
    screen = null;
    if (tell) options.tellStopped();
    options.onSharing(false);
  }

  return {
    toggle: async () => {
      if (screen) return stop(true);
      let shared: MediaStream;
      try {
        shared = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
      } catch {
        options.say(t('call.screenCancelled'));
        return;
      }
      screen = shared;
      if (!(await announce(shared))) return;
      options.mesh.addTracks(shared);
      shared.getVideoTracks()[0]?.addEventListener('ended', () => stop(true));
      options.onSharing(true);
    },
    stop,
    announceAgain: async () => {
      if (screen) await announce(screen);
    },
    active: () => screen !== null,
  };
}

// What a page of a call did and when (bench/sfu-calls.bench.ts --first-frame):
// an init script stamps, with the machine's clock, every signaling message the
// page sends and receives (by type), each of its peer connections' local and
// remote descriptions, ICE and connection states and gathering's end, and the
// first frame of each remote video; `steps` turns a page's stamps into the
// milliseconds from a moment (the newcomer's click on Join) to the first of
// each step.
import type { Page } from 'playwright-core';

export interface Stamp {
  at: number;
  what: string;
}

/** The init script's text: tsx names the functions of `stampCall` with a helper the page lacks (esbuild's keepNames). */
export const stampScript = (): { content: string } => ({ content: `var __name = (f) => f; (${stampCall.toString()})();` });

/** The init script (runs in the page before its own code). */
function stampCall(): void {
  const stamps: { at: number; what: string }[] = [];
  (window as unknown as { __stamps: typeof stamps }).__stamps = stamps;
  const stamp = (what: string) => stamps.push({ at: Date.now(), what });
  const typeOf = (data: unknown) => {
    try {
      const message = JSON.parse(String(data)) as { type?: string; sdp?: unknown };
      return message.type === 'sfu-offer' && message.sdp === null ? 'sfu-offer(empty)' : (message.type ?? '?');
    } catch {
      return '?';
    }
  };
  const NativeSocket = window.WebSocket;
  window.WebSocket = class extends NativeSocket {
    constructor(url: string | URL, protocols?: string | string[]) {
      super(url, protocols);
      this.addEventListener('message', (event) => stamp(`recv ${typeOf(event.data)}`));
    }
    override send(data: string | ArrayBufferLike | Blob | ArrayBufferView) {
      stamp(`send ${typeOf(data)}`);
      super.send(data);
    }
  } as typeof WebSocket;
  const NativePc = window.RTCPeerConnection;
  let made = 0;
  window.RTCPeerConnection = class extends NativePc {
    constructor(config?: RTCConfiguration) {
      super(config);
      const name = `pc${++made}`;
      stamp(`${name} made`);
      this.addEventListener('iceconnectionstatechange', () => stamp(`${name} ice ${this.iceConnectionState}`));
      this.addEventListener('connectionstatechange', () => stamp(`${name} connection ${this.connectionState}`));
      this.addEventListener('icegatheringstatechange', () => stamp(`${name} gathering ${this.iceGatheringState}`));
      this.addEventListener('icecandidate', (event) => event.candidate && stamp(`${name} candidate ${event.candidate.type ?? '?'}`));
      this.addEventListener('track', (event) => stamp(`${name} track ${event.track.kind}`));
      const local = this.setLocalDescription.bind(this);
      const remote = this.setRemoteDescription.bind(this);
      this.setLocalDescription = ((description?: RTCSessionDescriptionInit) => {
        stamp(`${name} local ${description?.type ?? 'implicit'}`);
        return local(description);
      }) as RTCPeerConnection['setLocalDescription'];
      this.setRemoteDescription = ((description: RTCSessionDescriptionInit) => {
        stamp(`${name} remote ${description.type}`);
        return remote(description);
      }) as RTCPeerConnection['setRemoteDescription'];
    }
  } as typeof RTCPeerConnection;
  // The first frame of each remote video element (a tile shows one person).
  const seen = new WeakSet<HTMLVideoElement>();
  const watch = () => {
    document.querySelectorAll<HTMLVideoElement>('[data-testid="remote-video"]').forEach((video) => {
      if (seen.has(video) || video.videoWidth === 0) return;
      seen.add(video);
      stamp(`frame ${video.getAttribute('aria-label') ?? '?'}`);
    });
    requestAnimationFrame(watch);
  };
  requestAnimationFrame(watch);
}

export const stampsOf = (page: Page): Promise<Stamp[]> => page.evaluate(() => (window as unknown as { __stamps: Stamp[] }).__stamps ?? []);

/** Milliseconds from `since` to the first stamp of each kind at or after it; remote videos' first frames as `frame 1`, `frame 2`, in order. */
export function steps(stamps: Stamp[], since: number): Map<string, number> {
  const first = new Map<string, number>();
  let frames = 0;
  for (const stamp of stamps) {
    if (stamp.at < since) continue;
    let what = stamp.what.replace(/ candidate .*/, ' candidate');
    if (what.startsWith('frame ')) what = `frame ${++frames}`;
    if (!first.has(what)) first.set(what, stamp.at - since);
  }
  return first;
}

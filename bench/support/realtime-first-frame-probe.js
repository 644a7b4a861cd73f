// Installed in every page of the browser benchmark before the page's own
// scripts (Playwright addInitScript), the same in Parley's page and in the
// bare call's. It records the click on Join (or Start), then polls getStats()
// of every RTCPeerConnection until one has decoded a remote video frame, and
// logs the steps in between (signaling frames, peer connection states, long
// tasks of the main thread) with wall-clock times, so that the benchmark can
// line up both pages of a call and split the time into phases.
// Plain browser JavaScript: no build step, nothing injected.
(() => {
  const events = [];
  const now = () => performance.timeOrigin + performance.now();
  const log = (name, extra) => events.push({ name, at: now(), ...extra });
  const pcs = [];
  const state = { events, pcs, clickAt: null, firstFrameAt: null };
  window.__probe = state;

  const NativeWebSocket = window.WebSocket;
  window.WebSocket = class extends NativeWebSocket {
    constructor(...args) {
      super(...args);
      log('ws-created');
      this.addEventListener('open', () => log('ws-open'));
      this.addEventListener('message', (event) => {
        try {
          const message = JSON.parse(event.data);
          if (message.type === 'joined') log('joined');
          if (message.type === 'peer-joined') log('peer-joined-received');
          if (message.type === 'signal' && message.data && message.data.description) log(`${message.data.description.type}-received`);
          if (message.type === 'signal' && message.data && message.data.candidate) log('candidate-received');
        } catch {}
      });
    }
    send(data) {
      try {
        const message = JSON.parse(data);
        if (message.type === 'join') log('join-sent');
        if (message.type === 'signal' && message.data && message.data.description) log(`${message.data.description.type}-sent`);
        if (message.type === 'signal' && message.data && message.data.candidate) log('candidate-sent');
      } catch {}
      super.send(data);
    }
  };

  const NativePeerConnection = window.RTCPeerConnection;
  window.RTCPeerConnection = class extends NativePeerConnection {
    constructor(...args) {
      super(...args);
      pcs.push(this);
      log('pc-created');
      this.addEventListener('negotiationneeded', () => log('negotiationneeded'));
      this.addEventListener('icecandidate', (event) => log(event.candidate ? 'local-candidate' : 'gathering-done'));
      this.addEventListener('iceconnectionstatechange', () => {
        if (this.iceConnectionState === 'connected' || this.iceConnectionState === 'completed') log('ice-connected');
      });
      this.addEventListener('connectionstatechange', () => this.connectionState === 'connected' && log('connected'));
      this.addEventListener('track', () => log('track'));
    }
  };

  try {
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) events.push({ name: 'longtask', at: performance.timeOrigin + entry.startTime, duration: entry.duration });
    }).observe({ type: 'longtask' });
  } catch {}

  async function framesDecoded() {
    let frames = 0;
    for (const pc of pcs) {
      if (pc.connectionState === 'closed') continue;
      (await pc.getStats()).forEach((s) => {
        if (s.type === 'inbound-rtp' && s.kind === 'video') frames += s.framesDecoded || 0;
      });
    }
    return frames;
  }

  async function poll() {
    const deadline = performance.now() + 30000;
    while (performance.now() < deadline) {
      if ((await framesDecoded()) > 0) {
        state.firstFrameAt = now();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  document.addEventListener(
    'click',
    (event) => {
      if (state.clickAt !== null || !(event.target instanceof Element)) return;
      if (!event.target.closest('[data-probe-start], [data-testid="join-button"]')) return;
      state.clickAt = now();
      void poll();
    },
    true,
  );
})();

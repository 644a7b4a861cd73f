// What a page's main thread did, read from a Chromium performance trace
// (DevTools' format, browser.startTracing with the devtools.timeline
// categories): from the click to `untilMs` after it, the time in tasks and,
// within them, in style, layout, paint and script. Style, layout and paint
// never nest in one another, so their sums do not overlap.

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  args?: { data?: { type?: string } };
}

export interface MainThreadTime {
  /** Tasks run (RunTask), ms. */
  busy: number;
  /** Style recalculation (UpdateLayoutTree), ms. */
  style: number;
  /** Layout, ms. */
  layout: number;
  /** Pre-paint and paint, ms. */
  paint: number;
  /** The page's script: event handlers, timers, microtasks (outermost calls only; a style or layout it forces counts there too), ms. */
  script: number;
  /** The longest task, ms. */
  longestTask: number;
  /** Synchronous calls into WebRTC's signaling thread (its proxies: getParameters, addIceCandidate...), ms. */
  webrtc: number;
}

const SCRIPT = new Set(['FunctionCall', 'RunMicrotasks', 'TimerFire', 'EventDispatch', 'FireAnimationFrame']);

/** The clicking page's main thread from its click to `untilMs` after it; null when the trace has no click. */
export function mainThreadTime(trace: string, untilMs: number): MainThreadTime | null {
  const parsed = JSON.parse(trace) as { traceEvents?: TraceEvent[] } | TraceEvent[];
  const events = Array.isArray(parsed) ? parsed : (parsed.traceEvents ?? []);
  const click = events.find((e) => e.name === 'EventDispatch' && e.args?.data?.type === 'click');
  if (!click) return null;
  const from = click.ts;
  const to = click.ts + untilMs * 1000;
  const time: MainThreadTime = { busy: 0, style: 0, layout: 0, paint: 0, script: 0, longestTask: 0, webrtc: 0 };
  // Complete events of that thread in the window, outermost first where they start together.
  const mine = events
    .filter((e) => e.pid === click.pid && e.tid === click.tid && e.ph === 'X' && e.dur !== undefined && e.ts >= from && e.ts <= to)
    .sort((a, b) => a.ts - b.ts || b.dur! - a.dur!);
  let scriptUntil = 0;
  for (const e of mine) {
    const ms = e.dur! / 1000;
    if (e.name === 'RunTask') {
      time.busy += ms;
      time.longestTask = Math.max(time.longestTask, ms);
    } else if (e.name === 'UpdateLayoutTree') time.style += ms;
    else if (e.name === 'Layout') time.layout += ms;
    else if (e.name === 'Paint' || e.name === 'PrePaint') time.paint += ms;
    else if (/^\w+Proxy::\w+$/.test(e.name)) time.webrtc += ms;
    else if (SCRIPT.has(e.name) && e.ts >= scriptUntil) {
      // Script calls nest (a handler's microtasks, an event inside a call): count the outermost.
      time.script += ms;
      scriptUntil = e.ts + e.dur!;
    }
  }
  return time;
}

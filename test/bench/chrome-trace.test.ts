// bench:browser --chrome-trace reads the newcomer's main thread out of each
// Chromium trace (bench/support/chrome-trace.ts): only the clicking page's
// thread, only from the click to the first frame, nested script counted once.
import { describe, expect, it } from 'vitest';
import { mainThreadTime } from '../../bench/support/chrome-trace.js';

/** A complete event on the page's main thread (pid 1, tid 1) unless told; times in ms after 1 s. */
const x = (name: string, atMs: number, durMs: number, thread = { pid: 1, tid: 1 }, data?: Record<string, unknown>) => ({
  name,
  ph: 'X',
  ...thread,
  ts: 1_000_000 + atMs * 1000,
  dur: durMs * 1000,
  ...(data ? { args: { data } } : {}),
});

const trace = JSON.stringify({
  traceEvents: [
    x('RunTask', -50, 30), // before the click
    x('EventDispatch', 0, 2, undefined, { type: 'click' }),
    x('RunTask', 10, 40),
    x('FunctionCall', 10, 20),
    x('RunMicrotasks', 12, 5), // inside the call: counted with it
    x('PeerConnectionProxy::AddIceCandidate', 15, 3),
    x('UpdateLayoutTree', 31, 4),
    x('Layout', 35, 6),
    x('PrePaint', 41, 1),
    x('Paint', 42, 2),
    x('RunTask', 60, 12),
    x('RtpSenderProxy::GetParameters', 61, 7),
    x('RunTask', 60, 90, { pid: 2, tid: 2 }), // the other page
    x('RunTask', 300, 80), // after the first frame
  ],
});

describe('mainThreadTime', () => {
  it("sums the clicking page's main thread from the click to the first frame", () => {
    expect(mainThreadTime(trace, 200)).toEqual({ busy: 52, style: 4, layout: 6, paint: 3, script: 22, longestTask: 40, webrtc: 10 });
  });

  it('has nothing to say of a trace without a click', () => {
    expect(mainThreadTime(JSON.stringify([x('RunTask', 0, 10)]), 200)).toBeNull();
  });
});

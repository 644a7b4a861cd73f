// The join page's embedding bridge without a browser: a fake window, its
// parent and messages from every direction (docs/embedding.md, "Security").
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ParleyCommandMessage } from '../../src/client/embed.js';
import { nastyJson, RUNS } from '../../test/helpers/arbitraries.js';
import { parseEmbedCommand } from '../../src/shared/embed-protocol.js';
import { startEmbedBridge } from './embed-bridge.js';

const A = 'https://app.example.com';
const B = 'http://localhost:8080';

/** A window framed by `parent` (or not), with `ancestorOrigins` as Chromium gives it or, with none, as Firefox does. */
function fakeWindow(options: { framed?: boolean; ancestor?: string } = {}) {
  const posted: { message: unknown; origin: string }[] = [];
  const listeners: ((event: MessageEvent) => void)[] = [];
  const parent = { postMessage: (message: unknown, origin: string) => void posted.push({ message, origin }) };
  const self: Record<string, unknown> = {
    location: { ancestorOrigins: options.ancestor ? Object.assign([options.ancestor], { contains: () => false, item: () => null }) : undefined },
    addEventListener: (type: string, listener: (event: MessageEvent) => void) => type === 'message' && listeners.push(listener),
  };
  self.parent = options.framed === false ? self : parent;
  const deliver = (data: unknown, origin: string, source: unknown = parent) => {
    for (const listener of listeners) listener({ data, origin, source } as MessageEvent);
  };
  return { scope: self as unknown as Window, posted, listeners, deliver, parent };
}

const mic: ParleyCommandMessage = { parley: 1, command: 'toggle_microphone', detail: { enabled: false } };

describe('startEmbedBridge', () => {
  it('does nothing in a page that is not framed, or with no origin listed', () => {
    for (const [win, origins] of [
      [fakeWindow({ framed: false }), [A]],
      [fakeWindow({ ancestor: A }), []],
      [fakeWindow(), []],
    ] as const) {
      const bridge = startEmbedBridge(origins, win.scope);
      bridge.emit('ready', {});
      expect(bridge.active).toBe(false);
      expect(win.posted).toEqual([]);
      expect(win.listeners).toHaveLength(0);
    }
  });

  it('posts to the parent origin the browser names, if it is listed, and only there (never "*")', () => {
    const win = fakeWindow({ ancestor: B });
    startEmbedBridge([A, B], win.scope).emit('join', { role: 'guest', display_name: 'Pat' });
    expect(win.posted).toEqual([{ message: { parley: 1, event: 'join', detail: { role: 'guest', display_name: 'Pat' } }, origin: B }]);

    const elsewhere = fakeWindow({ ancestor: 'https://evil.example' });
    const bridge = startEmbedBridge([A, B], elsewhere.scope);
    bridge.emit('ready', {});
    expect(bridge.active).toBe(false);
    expect(elsewhere.posted).toEqual([]);
  });

  it("where the browser does not name the parent's origin: each listed origin, then only the one the parent spoke from", () => {
    const win = fakeWindow();
    const bridge = startEmbedBridge([A, B], win.scope);
    bridge.emit('ready', {});
    expect(win.posted.map((p) => p.origin)).toEqual([A, B]);
    win.deliver(mic, B);
    win.posted.length = 0;
    bridge.emit('microphone_toggle', { enabled: false });
    expect(win.posted.map((p) => p.origin)).toEqual([B]);
  });

  it('obeys a documented command from the parent on a listed origin, and nothing else', () => {
    const win = fakeWindow({ ancestor: A });
    const bridge = startEmbedBridge([A], win.scope);
    const obeyed: ParleyCommandMessage[] = [];
    bridge.onCommand((command) => obeyed.push(command));
    win.deliver(mic, 'https://evil.example');
    win.deliver(mic, B);
    win.deliver(mic, A, { postMessage() {} }); // another window of the listed origin: a popup, a sibling frame
    win.deliver(mic, A, null);
    win.deliver({ ...mic, parley: 2 }, A);
    win.deliver(JSON.stringify(mic), A);
    expect(obeyed).toEqual([]);
    win.deliver(mic, A);
    expect(obeyed).toEqual([mic]);
  });

  it('takes a burst of 20 commands, then about 10 a second: a runaway parent cannot flood the call', () => {
    const win = fakeWindow({ ancestor: A });
    const bridge = startEmbedBridge([A], win.scope);
    let obeyed = 0;
    bridge.onCommand(() => obeyed++);
    for (let i = 0; i < 500; i++) win.deliver(mic, A);
    expect(obeyed).toBeGreaterThanOrEqual(20);
    expect(obeyed).toBeLessThan(25);
  });

  it('keeps a command that throws inside the page: no error escapes into the call', () => {
    const win = fakeWindow({ ancestor: A });
    const bridge = startEmbedBridge([A], win.scope);
    bridge.onCommand(() => {
      throw new Error('no such participant');
    });
    expect(() => win.deliver(mic, A)).not.toThrow();
  });

  it('hands no malformed message to the page, whatever the parent posts', () => {
    const win = fakeWindow({ ancestor: A });
    const bridge = startEmbedBridge([A], win.scope);
    const obeyed: unknown[] = [];
    const delivered: unknown[] = [];
    bridge.onCommand((command) => obeyed.push(command));
    fc.assert(
      fc.property(fc.oneof(nastyJson, fc.anything({ withDate: true, withMap: true, withNullPrototype: true })), (data) => {
        delivered.push(data);
        win.deliver(data, A);
      }),
      { numRuns: RUNS },
    );
    // Exactly what the protocol's reader takes (random values make a documented command seldom if ever).
    expect(obeyed).toEqual(delivered.map(parseEmbedCommand).filter((c) => c !== null));
  });
});

// Storage a browser refuses does not stop the pages (issue 42, item 6): the
// refusals browsers really give, and a scan that keeps every use of the
// browser's storage in web/src/storage.ts.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pageStorage } from './storage.js';

/** A Storage of a Map; `refuse` makes the named methods throw as a browser's refusal does. */
function fakeStorage(refuse: ('getItem' | 'setItem' | 'removeItem')[] = []) {
  const items = new Map<string, string>();
  const denied = () => {
    throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
  };
  return {
    items,
    storage: {
      getItem: refuse.includes('getItem') ? denied : (key: string) => items.get(key) ?? null,
      setItem: refuse.includes('setItem') ? denied : (key: string, value: string) => void items.set(key, value),
      removeItem: refuse.includes('removeItem') ? denied : (key: string) => void items.delete(key),
    },
  };
}

describe('pageStorage', () => {
  it('uses the browser storage when it is there: a reload finds what the page wrote', () => {
    const { items, storage } = fakeStorage();
    const first = pageStorage('sessionStorage', { sessionStorage: storage });
    first.set('k', 'v');
    expect(items.get('k')).toBe('v');
    // The next load of the page: a new module, the same browser storage.
    expect(pageStorage('sessionStorage', { sessionStorage: storage }).get('k')).toBe('v');
    first.remove('k');
    expect(items.has('k')).toBe(false);
  });

  it("survives a window whose storage property throws (Chromium's cross-site frame, Firefox blocking cookies): memory instead", () => {
    const scope = {};
    let reads = 0;
    Object.defineProperty(scope, 'sessionStorage', {
      get() {
        reads++;
        throw new DOMException("Failed to read the 'sessionStorage' property from 'Window': Access is denied for this document.", 'SecurityError');
      },
    });
    const store = pageStorage('sessionStorage', scope);
    expect(store.get('k')).toBeNull();
    store.set('k', 'v');
    expect(store.get('k')).toBe('v');
    store.remove('k');
    expect(store.get('k')).toBeNull();
    // Asked once: a refusal does not change while the page lives.
    expect(reads).toBe(1);
  });

  it('survives a storage that refuses writes (Safari private mode), and never returns an older value a refused write left', () => {
    const { items, storage } = fakeStorage(['setItem', 'removeItem']);
    items.set('k', 'from an earlier load');
    const store = pageStorage('sessionStorage', { sessionStorage: storage });
    expect(store.get('k')).toBe('from an earlier load');
    store.set('k', 'now');
    expect(store.get('k')).toBe('now');
    store.remove('k');
    expect(store.get('k')).toBeNull();
  });

  it('survives reads that throw, and a browser without the storage at all', () => {
    const { storage } = fakeStorage(['getItem']);
    const refusing = pageStorage('localStorage', { localStorage: storage });
    expect(refusing.get('k')).toBeNull();
    refusing.set('k', 'v');
    expect(refusing.get('k')).toBe('v');
    const none = pageStorage('localStorage', {});
    none.set('k', 'v');
    expect(none.get('k')).toBe('v');
  });
});

describe('the pages', () => {
  const dir = path.dirname(new URL(import.meta.url).pathname);
  const files = (at: string): string[] =>
    fs.readdirSync(at, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(at, e.name)) : /\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [path.join(at, e.name)] : []));

  it('reach sessionStorage, localStorage, cookies and IndexedDB only through storage.ts', () => {
    const offenders = files(dir)
      .filter((file) => path.basename(file) !== 'storage.ts')
      .filter((file) => /\b(sessionStorage|localStorage|indexedDB|cookieStore)\b|\.cookie\b/.test(fs.readFileSync(file, 'utf8').replace(/^\s*(\/\/|\*).*$/gm, '')))
      .map((file) => path.relative(dir, file));
    expect(offenders).toEqual([]);
  });
});

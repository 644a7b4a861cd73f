// The pages' only way to Web Storage (docs/design.md, "Embedding"). A browser
// may refuse it: a cross-site iframe in Chromium with third-party storage
// blocked throws "Access is denied for this document" on the mere read of
// `window.sessionStorage`, Firefox with cookies blocked throws a SecurityError,
// Safari's private mode refuses writes (QuotaExceededError). None of that may
// stop the call: every read and write here survives a refusal and falls back
// to the page's memory, so what the page keeps lasts at least as long as the
// page does (reconnecting within the page works; only a reload forgets).
// web/src/storage.test.ts fails when another module of the pages touches
// sessionStorage, localStorage, cookies or IndexedDB directly.

export interface PageStorage {
  get(key: string): string | null;
  set(key: string, value: string): void;
  remove(key: string): void;
}

type Kind = 'sessionStorage' | 'localStorage';

/** A storage of `kind` that never throws. `scope`: where the browser's storage lives (the window; tests pass their own). */
export function pageStorage(kind: Kind, scope: object = globalThis): PageStorage {
  /** What this page wrote (null: removed), which wins over the browser's copy: a refused write may have left an older value there. */
  const memory = new Map<string, string | null>();
  let browser: Storage | null | undefined;
  const store = (): Storage | null => {
    if (browser === undefined) {
      try {
        browser = (scope as Record<Kind, Storage | undefined>)[kind] ?? null;
      } catch {
        browser = null;
      }
    }
    return browser;
  };
  const attempt = <T>(use: (storage: Storage) => T): T | null => {
    try {
      const storage = store();
      return storage ? use(storage) : null;
    } catch {
      return null;
    }
  };
  return {
    get: (key) => (memory.has(key) ? memory.get(key)! : attempt((s) => s.getItem(key))),
    set(key, value) {
      memory.set(key, value);
      attempt((s) => s.setItem(key, value));
    },
    remove(key) {
      memory.set(key, null);
      attempt((s) => s.removeItem(key));
    },
  };
}

/** This tab's storage: what a reload of the page should still find. */
export const sessionStore = pageStorage('sessionStorage');

// What the join page's script needs, rendered by the server into the page's
// JSON block (src/http/routes/join.routes.ts) and read by web/src/call.ts.
// Shared with web/: no Node imports here.
import type { Catalogue } from './i18n/en.js';
import type { Language } from './i18n/languages.js';
import type { IceServerInfo, RoomSettings } from './protocol.js';

export interface JoinPageData {
  page: 'join';
  joinToken: string;
  roomName: string;
  role: 'host' | 'guest';
  displayName: string;
  settings: RoomSettings;
  /** The page's language (docs/design.md, "Languages and layout"), its direction, and its one catalogue. */
  lang: Language;
  dir: 'ltr' | 'rtl';
  catalogue: Catalogue;
  /**
   * The ICE servers the call will use, with TURN credentials of this page's
   * own (user "page-<random>", short-lived; `ttlSeconds` from now, null
   * without TURN): the join screen's network check gathers candidates with
   * them, and so does the call's first connection, made while the join screen
   * shows (docs/call.md, "Join to first remote frame").
   */
  network: { iceServers: IceServerInfo[]; iceTransportPolicy: 'all' | 'relay'; ttlSeconds: number | null };
  /**
   * Embedding (docs/design.md, "Embedding"): `origins`, the exact origins that
   * may frame this page (its CSP frame-ancestors), the only ones it posts
   * events to and takes commands from (none: neither); `minimal`
   * (`?minimal=1`), no header, for small boxes.
   */
  embed: { origins: string[]; minimal: boolean };
}

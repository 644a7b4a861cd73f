// The page's language: the server sends the one catalogue the page speaks
// (docs/design.md, "Languages and layout"; src/shared/i18n/languages.ts chooses it), and every text the page
// shows comes through t(). The catalogues are never bundled: only types are
// imported from src/shared/i18n/en.ts.
import { formatMessage, type Message, type Params } from '../../src/shared/i18n/catalogue.js';
import type { Catalogue, MessageKey } from '../../src/shared/i18n/en.js';

let lang = 'en';
let catalogue: Partial<Record<MessageKey, Message>> = {};

export function useCatalogue(language: string, messages: Catalogue): void {
  lang = language;
  catalogue = messages;
}

/** The text of `key` in the page's language; a key the catalogue lacks shows as itself (tests look for those). */
export function t(key: MessageKey, params?: Params): string {
  const message = catalogue[key];
  return message === undefined ? key : formatMessage(lang, message, params);
}

/**
 * What to tell the person about a refusal of the server, by its error code:
 * the server's own message is English for developers, not for patients.
 */
export function errorText(code: string): string {
  const key = `error.${code}` as MessageKey;
  return key in catalogue ? t(key) : t('error.other');
}

/** The page's language, for Intl formatting. */
export function language(): string {
  return lang;
}

// Texts of the participant pages on the server: the pages it renders itself
// (unknown link, closed room, after the call) and the catalogue it sends
// with the join page.
import { formatMessage, type Params } from './catalogue.js';
import { CATALOGUES } from './catalogues/index.js';
import type { Catalogue, MessageKey } from './en.js';
import type { Language } from './languages.js';

export function catalogueFor(lang: Language): Catalogue {
  return CATALOGUES[lang];
}

export function translate(lang: Language, key: MessageKey, params?: Params): string {
  return formatMessage(lang, CATALOGUES[lang][key], params);
}

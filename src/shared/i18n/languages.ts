// The languages of the participant pages (docs/design.md, "Languages and layout") and how a page's
// language is chosen: `?lang=` on the join URL, else the room's `locale`,
// else the browser's Accept-Language, else English.

export const LANGUAGES = ['en', 'de', 'fr', 'es', 'it', 'nl', 'pt', 'pl', 'tr', 'ar'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'en';

const RIGHT_TO_LEFT: ReadonlySet<Language> = new Set(['ar']);

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

export function directionOf(lang: Language): 'ltr' | 'rtl' {
  return RIGHT_TO_LEFT.has(lang) ? 'rtl' : 'ltr';
}

/** A language tag's primary subtag, if we speak it: "pt-BR" → "pt", "DE" → "de". */
function supported(tag: string): Language | null {
  const primary = tag.trim().split(/[-_]/)[0]!.toLowerCase();
  return isLanguage(primary) ? primary : null;
}

/**
 * The best language of an Accept-Language header (RFC 9110 §12.5.4): the
 * highest q we speak; on a tie, the one listed first. Null when none is ours.
 */
export function fromAcceptLanguage(header: string | undefined): Language | null {
  if (!header) return null;
  let best: { lang: Language; q: number } | null = null;
  for (const part of header.slice(0, 1000).split(',')) {
    const [tag = '', ...params] = part.split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    const lang = supported(tag);
    if (!lang || !Number.isFinite(q) || q <= 0) continue;
    if (!best || q > best.q) best = { lang, q };
  }
  return best?.lang ?? null;
}

export function chooseLanguage(sources: { query?: string | undefined; roomLocale?: string | null; acceptLanguage?: string | undefined }): Language {
  const fromQuery = sources.query ? supported(sources.query) : null;
  return fromQuery ?? (isLanguage(sources.roomLocale) ? sources.roomLocale : null) ?? fromAcceptLanguage(sources.acceptLanguage) ?? DEFAULT_LANGUAGE;
}

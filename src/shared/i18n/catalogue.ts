// What a catalogue is: one message per key, written for people, in one
// language. A message is text with {placeholders}, or plural forms chosen by
// its {count} through Intl.PluralRules (Arabic has six, English two). Shared
// with web/: no Node imports here.

/** Plural forms by CLDR category; `other` is always there. */
export type PluralMessage = { [C in Intl.LDMLPluralRule]?: string } & { other: string };
export type Message = string | PluralMessage;

export type Params = Record<string, string | number>;

/** Fills `{name}` placeholders; numbers are written the language's way. */
function fill(text: string, lang: string, params: Params): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const value = params[name];
    if (value === undefined) return whole;
    return typeof value === 'number' ? new Intl.NumberFormat(lang).format(value) : value;
  });
}

/** The text of one message in language `lang` with its parameters filled in. */
export function formatMessage(lang: string, message: Message, params: Params = {}): string {
  if (typeof message === 'string') return fill(message, lang, params);
  const count = Number(params.count ?? 0);
  const category = new Intl.PluralRules(lang).select(count);
  return fill(message[category] ?? message.other, lang, params);
}

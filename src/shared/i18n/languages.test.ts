// How a page's language is chosen (docs/design.md, "Languages and layout"), and the message format.
import { describe, expect, it } from 'vitest';
import { formatMessage } from './catalogue.js';
import { chooseLanguage, directionOf, fromAcceptLanguage } from './languages.js';

describe('the language of a page', () => {
  it('is ?lang= first, then the room, then Accept-Language, then English', () => {
    expect(chooseLanguage({ query: 'fr', roomLocale: 'de', acceptLanguage: 'ar' })).toBe('fr');
    expect(chooseLanguage({ query: 'xx', roomLocale: 'de', acceptLanguage: 'ar' })).toBe('de');
    expect(chooseLanguage({ roomLocale: null, acceptLanguage: 'ar' })).toBe('ar');
    expect(chooseLanguage({ roomLocale: 'klingon', acceptLanguage: 'ja, zh;q=0.8' })).toBe('en');
    expect(chooseLanguage({})).toBe('en');
  });

  it('takes the best Accept-Language we speak, by q and then by order, and the primary subtag of a region', () => {
    expect(fromAcceptLanguage('pt-BR,pt;q=0.9,en;q=0.8')).toBe('pt');
    expect(fromAcceptLanguage('ja,de;q=0.5,nl;q=0.7')).toBe('nl');
    expect(fromAcceptLanguage('TR')).toBe('tr');
    expect(fromAcceptLanguage('es;q=0, it;q=0.1')).toBe('it');
    expect(fromAcceptLanguage('*')).toBeNull();
    expect(fromAcceptLanguage('de;q=abc')).toBeNull();
    expect(fromAcceptLanguage(undefined)).toBeNull();
  });

  it('is written right to left in Arabic only', () => {
    expect(directionOf('ar')).toBe('rtl');
    expect(directionOf('de')).toBe('ltr');
  });
});

describe('messages', () => {
  it('fill placeholders and write numbers the language’s way', () => {
    expect(formatMessage('en', 'Admit {name}', { name: 'Pat' })).toBe('Admit Pat');
    expect(formatMessage('de', '{n} ms', { n: 1234.5 })).toBe('1.234,5 ms');
    expect(formatMessage('en', 'Keep {unknown}', {})).toBe('Keep {unknown}');
  });

  it('choose the plural form by the language’s rules', () => {
    const en = { one: '{count} person', other: '{count} people' };
    expect(formatMessage('en', en, { count: 1 })).toBe('1 person');
    expect(formatMessage('en', en, { count: 3 })).toBe('3 people');
    const pl = { one: '{count} osoba', few: '{count} osoby', many: '{count} osób', other: '{count} osoby' };
    expect([1, 2, 5, 22].map((count) => formatMessage('pl', pl, { count }))).toEqual(['1 osoba', '2 osoby', '5 osób', '22 osoby']);
    // Digits as this ICU writes them in Arabic (Latin in recent CLDR, Arabic-Indic in older).
    const arabic = new Intl.NumberFormat('ar');
    const ar = { zero: 'zero', one: 'one', two: 'two', few: 'few {count}', many: 'many {count}', other: 'other' };
    expect([0, 1, 2, 3, 11, 100].map((count) => formatMessage('ar', ar, { count }))).toEqual(['zero', 'one', 'two', `few ${arabic.format(3)}`, `many ${arabic.format(11)}`, 'other']);
  });
});

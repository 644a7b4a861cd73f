// The catalogues are complete and every text the page shows comes from them
// (docs/design.md, "Languages and layout"): a catalogue missing a key, a placeholder or a plural
// form fails here, and so does English text written into the page's code.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOGUES } from '../../src/shared/i18n/catalogues/index.js';
import { en } from '../../src/shared/i18n/en.js';
import { LANGUAGES } from '../../src/shared/i18n/languages.js';

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
const texts = (message: string | Record<string, string>) => (typeof message === 'string' ? [message] : Object.values(message));

describe('the catalogues', () => {
  it.each(LANGUAGES.filter((lang) => lang !== 'en'))('%s has every key of English, and no other', (lang) => {
    expect(Object.keys(CATALOGUES[lang])).toEqual(Object.keys(en));
  });

  it.each(LANGUAGES)('%s keeps every placeholder and has the plural forms its language needs', (lang) => {
    const categories = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
    for (const [key, source] of Object.entries(en)) {
      const message = CATALOGUES[lang][key as keyof typeof en];
      const wanted = placeholders(texts(source).join(' ')).filter((name) => name !== 'count');
      for (const text of texts(message)) {
        expect(text.trim(), `${lang} ${key}`).not.toBe('');
        for (const name of wanted) expect(placeholders(text), `${lang} ${key} lacks {${name}}`).toContain(name);
      }
      if (typeof source !== 'string') {
        expect(typeof message, `${lang} ${key} must have plural forms`).toBe('object');
        // `many` is only for exact millions in some languages: the others fall back to `other`, which must be there.
        for (const category of categories.filter((c) => c !== 'many' || lang === 'pl' || lang === 'ar')) {
          expect(Object.keys(message), `${lang} ${key} lacks the ${category} form`).toContain(category);
        }
      }
    }
  });
});

describe('the page code', () => {
  const files = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) return files(file);
      return file.endsWith('.ts') && !file.endsWith('.test.ts') ? [file] : [];
    });

  it('writes no text of its own: every word a person sees is a catalogue key', () => {
    const found: string[] = [];
    for (const file of files(path.resolve('web/src'))) {
      const code = fs
        .readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '')
        .replace(/ \/\/ .*$/gm, '');
      for (const [, literal] of code.matchAll(/'((?:[^'\\\n]|\\.)*)'|`((?:[^`\\]|\\.)*)`/g)) {
        if (literal === undefined) continue;
        // Words as people read them: a capitalised word followed by others, or a sentence.
        if (/^[A-Z][a-z]+(?: [a-zA-Z’'-]+)+[.!?…]?$/.test(literal) || /[a-z]{2,} [a-z]{2,} [a-z]{2,}/.test(literal)) found.push(`${path.relative('.', file)}: ${literal}`);
      }
      // A single word as an element's text or label: h('button', {...}, 'Join'), 'aria-label': 'Close'.
      for (const [, word] of code.matchAll(/(?:,\s*|(?:label|title|placeholder)'?:\s*)'([A-Z][a-z]{2,})'\s*[,)}]/g)) found.push(`${path.relative('.', file)}: ${word}`);
    }
    expect(found).toEqual([]);
  });
});

// The documents check themselves (issue 40): what the docs and the code's
// comments point at must be in this repository and must resolve, the
// "Extensions not yet built" must not be built, every entry of "Where things
// are decided" must name a file that exists and names that are in it, and the
// page weight the docs state must be the build's, within 5 %.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SELF = path.relative(ROOT, fileURLToPath(import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const inCI = process.env.CI === 'true' || process.env.CI === '1';

/** Folders that are built, installed or made at run time, never written by hand. */
const SKIPPED = new Set(['node_modules', 'dist', 'data', '.git', 'screenshots', 'coverage']);

function walk(dir: string): string[] {
  if (!existsSync(path.join(ROOT, dir))) return [];
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : walk(rel);
    return [rel];
  });
}

const ALL = ['README.md', ...['docs', 'src', 'web', 'test', 'bench', 'scripts'].flatMap(walk)].filter((f) => f !== SELF);
const MARKDOWN = ALL.filter((f) => f.endsWith('.md'));
const CODE = ALL.filter((f) => /\.(ts|mts|mjs|js|css|sql|sh)$/.test(f));

/** 1-based line of an offset, for messages. */
const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** Markdown without its fenced code blocks (their `#` lines are not headings, their brackets not links). */
const withoutFences = (markdown: string) => markdown.replace(/^ {0,3}(```|~~~)[^\n]*\n[\s\S]*?^ {0,3}\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '));

/**
 * A source file's comments (what a reader is told) and its code, each with
 * the other blanked, so that offsets still give lines.
 */
function splitComments(file: string, text: string): { comments: string; code: string } {
  const pattern = file.endsWith('.sql') ? /--[^\n]*/g : file.endsWith('.sh') ? /(^|\s)#[^\n]*/g : /\/\*[\s\S]*?\*\/|(?<![:'"`\w\\])\/\/[^\n]*/g;
  const blank = (part: string) => part.replace(/[^\n]/g, ' ');
  let comments = '';
  let code = '';
  let at = 0;
  for (const m of text.matchAll(pattern)) {
    const between = text.slice(at, m.index);
    comments += blank(between) + m[0];
    code += between + blank(m[0]);
    at = m.index + m[0].length;
  }
  return { comments: comments + blank(text.slice(at)), code: code + text.slice(at) };
}
const commentsOf = (file: string, text: string) => splitComments(file, text).comments;
const codeOf = (file: string, text: string) => splitComments(file, text).code;

/** GitHub's anchor of a heading: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

const headingCache = new Map<string, { texts: string[]; anchors: Set<string>; paragraphs: string[] }>();
function headingsOf(file: string) {
  let found = headingCache.get(file);
  if (!found) {
    const markdown = withoutFences(read(file));
    const texts = [...markdown.matchAll(/^ {0,3}#{1,6}\s+(.+?)\s*#*\s*$/gm)].map((m) => m[1]!);
    // A paragraph or list item that opens with its name in bold ("- **Waiting room** (…): …") is cited by that name too.
    const paragraphs = [...markdown.matchAll(/^ {0,3}(?:[-*] )?\*\*([^*\n]+?)\*\*/gm)].map((m) => m[1]!.replace(/[.:]$/, ''));
    const anchors = new Set<string>();
    const seen = new Map<string, number>();
    for (const text of texts) {
      const base = slug(text);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    found = { texts, anchors, paragraphs };
    headingCache.set(file, found);
  }
  return found;
}

/** A path a document or comment names, resolved from its own folder first, then from the repository's root. */
function resolveFrom(file: string, target: string): string | null {
  for (const candidate of [path.join(path.dirname(file), target), target]) {
    const abs = path.resolve(ROOT, candidate);
    if (abs.startsWith(ROOT + path.sep) && existsSync(abs)) return path.relative(ROOT, abs);
  }
  return null;
}

/** How a heading is cited by name: no numbering, no markup, one space, lower case. */
const citedForm = (text: string) =>
  text
    .replace(/\s*\n\s*(\/\/|\*|--|#)?\s*/g, ' ')
    .replace(/^\d+(\.\d+)*\.?\s+/, '')
    .replace(/[`*]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();

/**
 * Whether a heading (or a paragraph's bold name) of `file` is the one cited
 * by name. The docs/ pages are cited by a heading's whole text, or its start
 * before a colon, a comma or a parenthesis; bench/README.md's headings carry
 * an issue and a date around the name they are cited by.
 */
function hasHeading(file: string, cited: string): boolean {
  const want = citedForm(cited);
  const { texts, paragraphs } = headingsOf(file);
  return [...texts, ...paragraphs].some((text) => {
    const heading = citedForm(text);
    if (heading === want) return true;
    if (file.startsWith('docs/')) return heading.startsWith(want) && /^\s*[:(,—–]/.test(heading.slice(want.length));
    return heading.includes(want);
  });
}

describe('references outside the repository', () => {
  // Documents a reader of this repository does not have.
  const OUTSIDE = /DESIGN §|DESIGN\.md|BROWSER-TESTING\.md|video-rooms-interface/g;
  // A path of one machine: /work/…, /home/…, /root/…, /tmp/… (a route like /work/:n is no path).
  const MACHINE_PATH = /(?<![\w.:/-])\/(?:work|home|root|tmp|Users)\/[\w.-]+/g;
  // A relative path into a shared/ folder: fine only where that folder is one of the repository's (src/shared/).
  const SHARED = /(?:\.\.\/)+shared\//g;
  const sharedFolderExists = (file: string, ref: string) => {
    const folder = path.resolve(ROOT, path.dirname(file), ref);
    return folder.startsWith(ROOT + path.sep) && existsSync(folder);
  };

  function problems(files: string[], textOf: (file: string, text: string) => string, pattern: RegExp, accept: (file: string, match: string) => boolean = () => false) {
    const found: string[] = [];
    for (const file of files) {
      const text = textOf(file, read(file));
      for (const m of text.matchAll(pattern)) if (!accept(file, m[0])) found.push(`${file}:${lineOf(text, m.index)}: ${m[0]}`);
    }
    return found;
  }

  it('no document or source names a document that is not in the repository', () => {
    expect(problems([...MARKDOWN, ...CODE], (_f, t) => t, OUTSIDE)).toEqual([]);
  });

  it('no document or comment names a path of one machine', () => {
    expect(problems(MARKDOWN, (_f, t) => t, MACHINE_PATH)).toEqual([]);
    expect(problems(CODE, commentsOf, MACHINE_PATH)).toEqual([]);
  });

  it('no document or source reaches out of the repository through ../shared/', () => {
    expect(problems([...MARKDOWN, ...CODE], (_f, t) => t, SHARED, sharedFolderExists)).toEqual([]);
  });
});

describe('links and citations resolve', () => {
  it('every markdown link reaches a file of the repository, and its anchor a heading there', () => {
    const broken: string[] = [];
    let links = 0;
    for (const file of MARKDOWN) {
      // Inline code is no link either.
      const text = withoutFences(read(file)).replace(/`[^`\n]*`/g, (code) => ' '.repeat(code.length));
      for (const m of text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = m[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        links++;
        const [filePart, anchor] = target.split('#') as [string, string | undefined];
        const where = `${file}:${lineOf(text, m.index)}: ${target}`;
        const resolved = filePart === '' ? file : resolveFrom(file, decodeURIComponent(filePart));
        if (!resolved) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor && resolved.endsWith('.md') && !headingsOf(resolved).anchors.has(anchor)) broken.push(`${where} (no such heading)`);
      }
    }
    expect(links).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });

  it('every path in code type in the docs names a file or folder of the repository', () => {
    // bench/README.md is a log of runs: its paths are the code as it was then.
    const missing: string[] = [];
    for (const file of MARKDOWN.filter((f) => f !== 'bench/README.md')) {
      const text = read(file);
      for (const m of text.matchAll(/`((?:src|web|test|bench|scripts|docs|bin)\/[\w./-]*)`/g)) {
        // What the build makes (web/dist, dist/) is there only after npm run build.
        if (/^(web\/)?dist(\/|$)/.test(m[1]!)) continue;
        if (!resolveFrom(file, m[1]!)) missing.push(`${file}:${lineOf(text, m.index)}: ${m[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every FILE.md#anchor in the docs and the code names a heading of that file', () => {
    const broken: string[] = [];
    for (const file of [...MARKDOWN, ...CODE]) {
      const text = read(file);
      for (const m of text.matchAll(/((?:[\w.-]+\/)*[\w.-]+\.md)#([\w-]+)/g)) {
        const resolved = resolveFrom(file, m[1]!);
        const where = `${file}:${lineOf(text, m.index)}: ${m[0]}`;
        if (!resolved) broken.push(`${where} (no such file)`);
        else if (!headingsOf(resolved).anchors.has(m[2]!)) broken.push(`${where} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every FILE.md §N in the docs and the code names a numbered heading of that file', () => {
    const broken: string[] = [];
    for (const file of [...MARKDOWN, ...CODE]) {
      const text = read(file);
      for (const m of text.matchAll(/((?:[\w.-]+\/)*[\w.-]+\.md) §(\d+)((?:, §\d+)*)/g)) {
        const resolved = resolveFrom(file, m[1]!);
        const numbers = [m[2]!, ...[...m[3]!.matchAll(/§(\d+)/g)].map((n) => n[1]!)];
        for (const n of numbers) {
          if (!resolved || !headingsOf(resolved).texts.some((t) => t.startsWith(`${n}. `))) broken.push(`${file}:${lineOf(text, m.index)}: ${m[1]} §${n}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('every FILE.md, "Section" citation in the docs and the code names a heading of that file', () => {
    const broken: string[] = [];
    let citations = 0;
    for (const file of [...MARKDOWN, ...CODE]) {
      const text = read(file);
      for (const m of text.matchAll(/((?:[\w.-]+\/)*[\w.-]+\.md),? "([^"]+)"/g)) {
        citations++;
        const resolved = resolveFrom(file, m[1]!);
        const where = `${file}:${lineOf(text, m.index)}: ${m[1]} "${m[2]!.replace(/\s+/g, ' ')}"`;
        if (!resolved) broken.push(`${where} (no such file)`);
        else if (!hasHeading(resolved, m[2]!)) broken.push(`${where} (no such heading)`);
      }
    }
    expect(citations).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});

/** The lines of a section of docs/design.md, up to the next heading of its level or above. */
function designSection(title: string): string {
  const text = read('docs/design.md');
  const start = text.indexOf(`\n## ${title}\n`);
  expect(start, `docs/design.md has a section "${title}"`).toBeGreaterThanOrEqual(0);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}

describe('docs/design.md', () => {
  /** The product's own sources: what is built, not its tests. */
  const product = CODE.filter((f) => /^(src|web)\//.test(f) && !/\.test\.ts$|\.test-support\.ts$/.test(f)).map((f) => read(f)).join('\n');

  it('names, in each item of "Extensions not yet built", only things that do not exist yet', () => {
    const section = designSection('Extensions not yet built');
    const items = section.split(/\n(?=- )/).filter((item) => item.startsWith('- '));
    // None only when the section says so: an item the split missed would pass unchecked.
    expect(items.length > 0 || section.includes('\nNothing at the moment'), 'items, or "Nothing at the moment"').toBe(true);
    const built: string[] = [];
    for (const item of items) {
      const title = /^- \*\*(.+?)\*\*/.exec(item)?.[1] ?? item.slice(0, 40);
      const names = [...item.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      expect(names.length, `"${title}" names, in code type, what it will add`).toBeGreaterThan(0);
      for (const name of names) {
        const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        const pattern = new RegExp(`${/^\w/.test(name) ? '(?<![\\w-])' : ''}${escaped}${/\w$/.test(name) ? '(?![\\w-])' : ''}`);
        if (pattern.test(product)) built.push(`"${title}": ${name} exists in src/ or web/`);
      }
    }
    expect(built, 'an item that is built moves into the sections above').toEqual([]);
  });

  it('"Where things are decided" names files that exist and names that are in them', () => {
    const rows = designSection('Where things are decided')
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| what ') && !line.startsWith('|---'))
      .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| | \|$/g, '')));
    const entries = rows.filter(([, file]) => file !== '' && file !== '|');
    expect(entries.length).toBeGreaterThan(30);
    const problemsFound: string[] = [];
    for (const [what, fileCell, functionCell] of entries as [string, string, string][]) {
      const spans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
      const isPath = (span: string) => /^[\w./-]+\.(ts|sql|js|mjs|css|md)$/.test(span);
      const paths = [...spans(fileCell), ...spans(functionCell)].filter(isPath);
      const base = path.posix.dirname(paths.find((p) => p.includes('/')) ?? '.');
      const files: string[] = [];
      for (const p of paths) {
        const candidates = p.includes('/') ? [p] : [path.posix.join(base, p), ...files.map((f) => path.posix.join(path.posix.dirname(f), p))];
        const found = candidates.find((c) => existsSync(path.join(ROOT, c)) && statSync(path.join(ROOT, c)).isFile());
        if (found) files.push(found);
        else problemsFound.push(`${what}: no file ${p}`);
      }
      if (files.length === 0) {
        problemsFound.push(`${what}: names no file that exists`);
        continue;
      }
      // In the code, not in a comment that merely mentions it.
      const source = files.map((f) => codeOf(f, read(f))).join('\n');
      for (const name of spans(functionCell).filter((s) => !isPath(s) && /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(s))) {
        for (const part of name.split('.')) {
          if (!new RegExp(`(?<![\\w$])${part.replace(/\$/g, '\\$')}(?![\\w$])`).test(source)) problemsFound.push(`${what}: ${part} is not in ${files.join(', ')}`);
        }
      }
    }
    expect(problemsFound).toEqual([]);
  });
});

describe('page weight stated in the docs', () => {
  const dist = path.join(ROOT, 'web/dist');
  const manifestFile = path.join(dist, '.vite/manifest.json');
  const built = existsSync(manifestFile);

  /** Within 5 % of the build's figure. */
  const near = (stated: number, actual: number) => Math.abs(stated - actual) <= 0.05 * actual;
  const num = (text: string) => Number(text.replace(/,/g, ''));

  it.runIf(!built && inCI)('has a build to compare with (npm run build makes web/dist)', () => {
    expect(existsSync(manifestFile), 'web/dist/.vite/manifest.json').toBe(true);
  });

  /** The build's figures, read once the first test needs them. */
  async function measure() {
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Record<string, { file: string; css?: string[]; isEntry?: boolean; name?: string }>;
    const entry = Object.values(manifest).find((e) => e.isEntry && e.name === 'call');
    expect(entry, 'the manifest has the entry "call"').toBeDefined();
    expect(entry!.css, 'the call page has one stylesheet').toHaveLength(1);
    const size = (file: string) => {
      const body = readFileSync(path.join(dist, file));
      // Level 9, as the server compresses the built files (src/http/routes/web-assets.ts).
      return { bytes: body.length, gzip: gzipSync(body, { level: 9 }).length };
    };
    const script = size(entry!.file);
    const style = size(entry!.css![0]!);
    const { CATALOGUES } = (await import('../../src/shared/i18n/catalogues/index.js')) as { CATALOGUES: Record<string, unknown> };
    const catalogues = Object.values(CATALOGUES).map((c) => {
      const json = JSON.stringify(c);
      return { bytes: Buffer.byteLength(json), gzip: gzipSync(json, { level: 9 }).length };
    });
    const range = (key: 'bytes' | 'gzip') => [Math.min(...catalogues.map((c) => c[key])), Math.max(...catalogues.map((c) => c[key]))] as const;
    return { script, style, totalKb: (script.gzip + style.gzip) / 1000, range };
  }
  let measured: ReturnType<typeof measure> | undefined;
  const build = () => (measured ??= measure());

  describe.runIf(built)('against web/dist', () => {
    it('the call page is one script and one stylesheet', async () => {
      await build();
    });

    it("docs/call.md's Weight table is the build's", async () => {
      const { script, style, range } = await build();
      const table = read('docs/call.md');
      const row = (name: string) => new RegExp(`^\\| ${name} \\| ([\\d,]+) \\| ([\\d,]+) \\|$`, 'm').exec(table);
      for (const [name, actual] of [['script', script], ['stylesheet', style]] as const) {
        const m = row(name);
        expect(m, `docs/call.md has the row "${name}"`).not.toBeNull();
        expect(near(num(m![1]!), actual.bytes), `${name}: ${m![1]} bytes stated, ${actual.bytes} built`).toBe(true);
        expect(near(num(m![2]!), actual.gzip), `${name}: ${m![2]} gzip stated, ${actual.gzip} built`).toBe(true);
      }
      const languages = /^\| one language's catalogue[^|]*\| ([\d,]+) \(\w+\) – ([\d,]+) \(\w+\) \| ([\d,]+) \(\w+\) – ([\d,]+) \(\w+\) \|$/m.exec(table);
      expect(languages, "docs/call.md has the catalogue's row").not.toBeNull();
      const stated = languages!.slice(1).map(num);
      const actual = [...range('bytes'), ...range('gzip')];
      expect(stated.every((s, i) => near(s, actual[i]!)), `catalogue: ${stated.join(', ')} stated, ${actual.join(', ')} built`).toBe(true);
    });

    it('every "N kB gzip" in the docs is the build: the call page\'s script and stylesheet, or the embed module', async () => {
      const { totalKb } = await build();
      const embedFile = path.join(dist, 'embed/embed.js');
      const embedKb = existsSync(embedFile) ? gzipSync(readFileSync(embedFile), { level: 9 }).length / 1000 : null;
      const stated: string[] = [];
      for (const file of MARKDOWN) {
        const text = read(file);
        for (const m of text.matchAll(/(under |at most |below )?(\d+(?:\.\d+)?)\s*kB\s+(?:gzip|gzipped|compressed)/g)) {
          stated.push(m[0]);
          // What the figure is of: the sentence it stands in says so when it is the <parley-room> module.
          const sentence = text.slice(0, m.index).split(/[.;]\s|\n\s*\n/).pop()!;
          const ofEmbed = /embed|element|<parley-room>|module/i.test(sentence);
          const where = `${file}:${lineOf(text, m.index)}: "${m[0]}"`;
          const actual = ofEmbed ? embedKb : totalKb;
          // npm run build makes both; a build of the pages alone (vite build) has no embed module to compare with.
          if (actual === null && !inCI) continue;
          expect(actual, `${where}: the embed module is built (web/dist/embed/embed.js)`).not.toBeNull();
          const figure = Number(m[2]);
          if (m[1]) expect(actual!, `${where}, the build is ${actual!.toFixed(1)} kB gzip`).toBeLessThan(figure);
          else expect(near(figure, actual!), `${where}, the build is ${actual!.toFixed(1)} kB gzip`).toBe(true);
        }
      }
      expect(stated.length, 'docs/design.md and docs/call.md state it').toBeGreaterThanOrEqual(2);
    });

    it("every range of kB for the page's language is the catalogues' as built", async () => {
      const { range } = await build();
      const [low, high] = range('bytes').map((b) => b / 1000) as [number, number];
      let found = 0;
      for (const file of ['docs/design.md', 'docs/call.md']) {
        const text = read(file);
        for (const m of text.matchAll(/(\d+(?:\.\d+)?)–(\d+(?:\.\d+)?) kB for the[^.]*?language/g)) {
          found++;
          expect(near(Number(m[1]), low) && near(Number(m[2]), high), `${file}:${lineOf(text, m.index)}: "${m[0]}", the build is ${low}–${high} kB`).toBe(true);
        }
      }
      expect(found).toBeGreaterThanOrEqual(2);
    });
  });
});

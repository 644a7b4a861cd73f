// Product code stays readable in one sitting (docs/design.md, "Layers"): no
// function over 150 lines and no file over 400. A big unit may stay one unit,
// split across files by concern, but not one closure. Measured with the
// TypeScript compiler's own parser, so a function is what TypeScript says it is.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const MAX_FUNCTION_LINES = 150;
const MAX_FILE_LINES = 400;
/** Generated, not written: the typed client's declarations (`npm run client:generate`). */
const GENERATED = new Set(['src/client/openapi.d.ts']);

function productFiles(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true }).flatMap((entry) => {
    const file = path.relative(root, path.join(entry.parentPath, entry.name));
    const isProduct = entry.isFile() && file.endsWith('.ts') && !/\.(test|test-support)\.ts$/.test(file) && !GENERATED.has(file);
    return isProduct ? [file] : [];
  });
}

/** Every function (declaration, expression, arrow, method) longer than `max` lines in `source`, as `name:line (length)`. */
export function longFunctions(fileName: string, source: string, max: number): string[] {
  const sf = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.end).line;
      const named = node.name ?? (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent) ? node.parent.name : undefined);
      if (last - first + 1 > max) found.push(`${fileName}:${first + 1} ${named?.getText(sf) ?? '(anonymous)'} (${last - first + 1} lines)`);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

const files = [...productFiles('src'), ...productFiles('web/src')];

describe('sizes', () => {
  it('no product function is over 150 lines', () => {
    const long = files.flatMap((file) => longFunctions(file, fs.readFileSync(path.join(root, file), 'utf8'), MAX_FUNCTION_LINES));
    expect(long, `${long.length} function(s) over ${MAX_FUNCTION_LINES} lines: ${long.join('; ')}`).toEqual([]);
  });

  it('no product file is over 400 lines', () => {
    const long = files.flatMap((file) => {
      const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n').length;
      return lines > MAX_FILE_LINES ? [`${file} (${lines} lines)`] : [];
    });
    expect(files.length).toBeGreaterThan(100);
    expect(long, `${long.length} file(s) over ${MAX_FILE_LINES} lines: ${long.join('; ')}`).toEqual([]);
  });

  it('would see a long function wherever it is written', () => {
    const body = Array.from({ length: 10 }, (_, i) => `  step(${i});`).join('\n');
    const source = `function f() {\n${body}\n}\nconst g = () => {\n${body}\n};\nconst o = { m() {\n${body}\n} };\n`;
    expect(longFunctions('x.ts', source, 5).map((entry) => entry.split(' ')[1])).toEqual(['f', 'g', 'm']);
    expect(longFunctions('x.ts', source, 12)).toEqual([]);
  });
});

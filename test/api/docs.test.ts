// The settings tables of README.md and docs/configuration.md name every
// variable src/config.ts reads, and nothing it does not read.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Every variable name config.ts reads: env.X, integer(env, 'X', ...), boolean(env, 'X', ...). */
function configVariables(): string[] {
  const source = read('src/config.ts');
  const names = [...source.matchAll(/env\.([A-Z][A-Z0-9_]+)|\(env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1] ?? m[2]!);
  return [...new Set(names)].sort();
}

/** Variables in the first column of the markdown tables of a document. */
function tableVariables(markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \|/gm)].map((m) => m[1]!).sort();
}

describe('settings tables', () => {
  const variables = configVariables();

  it('config.ts reads the variables this test expects to find', () => {
    expect(variables).toEqual(expect.arrayContaining(['PORT', 'HOST', 'PUBLIC_URL', 'DATA_DIR', 'DATABASE_URL', 'PARLEY_ADMIN_TOKEN', 'PARLEY_URL']));
  });

  it.each(['README.md', 'docs/configuration.md'])('%s lists exactly those variables', (file) => {
    expect(tableVariables(read(file))).toEqual(variables);
  });
});

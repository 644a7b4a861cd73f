// Every import runs downhill (docs/design.md, "Layers"): a module imports only
// its own layer or those below, the browser's code only what it shares with
// the server (and the typed client's declarations), and no product module takes part in an import cycle. Read from
// the TypeScript sources with the compiler's own import scanner, so a type-only
// import counts as much as any other.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

/** Product sources: tests, test support and generated declarations are not part of the layering. */
function productFiles(dir: string): string[] {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true, recursive: true }).flatMap((entry) => {
    const file = path.relative(root, path.join(entry.parentPath, entry.name));
    const isProduct = entry.isFile() && file.endsWith('.ts') && !/\.(test|test-support|d)\.ts$/.test(file);
    return isProduct ? [file] : [];
  });
}

/** The relative imports of `file`, as repository paths of .ts files. */
export function importsOf(file: string): string[] {
  const { importedFiles } = ts.preProcessFile(fs.readFileSync(path.join(root, file), 'utf8'), true, true);
  return importedFiles
    .map((imported) => imported.fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => path.normalize(path.join(path.dirname(file), name)).replace(/\.js$/, '.ts'));
}

/**
 * The layers, lowest first. A module may import its own layer and any below;
 * `apart` lists layers of one level that must not import each other.
 */
const LAYERS: { name: string; files: RegExp }[] = [
  { name: 'shared (browser and server)', files: /^src\/shared\// },
  { name: 'foundations', files: /^src\/(config|errors)\.ts$/ },
  { name: 'database and observability', files: /^src\/(db|observability)\// },
  { name: 'domain', files: /^src\/domain\// },
  { name: 'services', files: /^src\/services\.ts$/ },
  { name: 'adapters (http, realtime, sfu)', files: /^src\/(http|realtime|sfu)\// },
  { name: 'processes (entries, server, jobs, the calls process, cli)', files: /^src\/([^/]+\.ts|cli\/|calls-process\/)/ },
];
const APART = [/^src\/http\//, /^src\/realtime\//];

function layerOf(file: string): number {
  const index = LAYERS.findIndex((layer) => layer.files.test(file));
  if (index < 0) throw new Error(`${file} is in no layer: add its folder to LAYERS`);
  return index;
}

/** Why `from` may not import `to`, or null. */
export function uphill(from: string, to: string): string | null {
  if (from.startsWith('web/src/')) {
    const allowed = ['web/src/', 'src/shared/', 'src/client/'].some((folder) => to.startsWith(folder));
    return allowed ? null : 'the browser imports only web/src, src/shared and the typed client';
  }
  if (from.startsWith('src/client/')) return to.startsWith('src/client/') ? null : 'the typed client imports only itself';
  if (!to.startsWith('src/')) return `product code imports no ${to.split('/')[0]}/`;
  if (to.startsWith('src/client/')) return null;
  const [a, b] = [layerOf(from), layerOf(to)];
  if (b > a) return `${LAYERS[a]!.name} imports ${LAYERS[b]!.name}`;
  const sibling = APART.find((folder) => folder.test(from) !== folder.test(to) && a === b && APART.some((other) => other.test(to)));
  return sibling ? 'http and realtime are siblings: neither imports the other' : null;
}

/** Every cycle of imports among `files`, each as the list of its modules (Tarjan's strongly connected components). */
export function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

const files = [...productFiles('src'), ...productFiles('web/src')];
const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe('imports', () => {
  it('finds the product modules and their imports', () => {
    // A scanner that found nothing would pass every rule below.
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get('src/main.ts')).toContain('src/server.ts');
  });

  it('run downhill: no module imports a layer above its own, the browser only what it shares', () => {
    const violations = files.flatMap((from) =>
      graph.get(from)!.flatMap((to) => {
        const why = uphill(from, to);
        return why ? [`${from} -> ${to}: ${why}`] : [];
      }),
    );
    expect(violations, `${violations.length} import(s) uphill: ${violations.join('; ')}`).toEqual([]);
  });

  it('form no cycle', () => {
    const found = cycles(graph).map((cycle) => cycle.join(' <-> '));
    expect(found, `${found.length} import cycle(s): ${found.join('; ')}`).toEqual([]);
  });

  it('would catch an uphill import, a sibling import, a browser import of the server and a cycle', () => {
    expect(uphill('src/domain/rooms/rooms.service.ts', 'src/realtime/hub.ts')).toMatch(/domain imports adapters/);
    expect(uphill('src/http/routes/join.routes.ts', 'src/realtime/hub.ts')).toMatch(/siblings/);
    expect(uphill('src/shared/protocol.ts', 'src/config.ts')).toMatch(/shared .* imports foundations/);
    expect(uphill('web/src/call.ts', 'src/http/routes/join.routes.ts')).toMatch(/browser/);
    expect(uphill('src/realtime/hub.ts', 'src/domain/rooms/rooms.service.ts')).toBeNull();
    expect(cycles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]))).toEqual([['a', 'b', 'c']]);
  });
});

// The participant front end built by Vite (web/dist): read once at start-up,
// kept in memory with a gzip copy, served under /assets/ with long caching
// (file names carry a content hash). Only files of the build are served.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export interface WebAsset {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
}

export interface WebBuild {
  /** URL paths of the entry's script and stylesheets. */
  script: string;
  styles: string[];
  files: Map<string, WebAsset>;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** web/dist from the source tree (src/http/routes) or the compiled one (dist/src/http/routes). */
export function webDistDir(): string | null {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.resolve(here, '../../../web/dist'), path.resolve(here, '../../../../web/dist')];
  return candidates.find((dir) => fs.existsSync(path.join(dir, '.vite', 'manifest.json'))) ?? null;
}

/** Loads the build, or null when the front end has not been built (npm run build). */
export function loadWebBuild(dir = webDistDir()): WebBuild | null {
  if (!dir) return null;
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, '.vite', 'manifest.json'), 'utf8')) as Record<
    string,
    { file: string; css?: string[]; isEntry?: boolean }
  >;
  const entry = Object.values(manifest).find((chunk) => chunk.isEntry);
  if (!entry) return null;
  const files = new Map<string, WebAsset>();
  for (const name of fs.readdirSync(dir)) {
    const type = TYPES[path.extname(name)];
    const full = path.join(dir, name);
    if (!type || !fs.statSync(full).isFile()) continue;
    const body = fs.readFileSync(full);
    const gzip = gzipSync(body, { level: 9 });
    files.set(name, { body, type, gzip: gzip.length < body.length ? gzip : null });
  }
  return { script: `/assets/${entry.file}`, styles: (entry.css ?? []).map((f) => `/assets/${f}`), files };
}

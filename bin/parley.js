#!/usr/bin/env node
// The `parley` command. It runs the compiled CLI, so `npm run build` (which
// `npm start` and `npm test` do) must have produced dist/ first.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('parley: dist/ is missing: run `npm run build` in the Parley folder first\n');
  process.exit(1);
}
await import(entry.href);

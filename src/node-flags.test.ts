import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVER_NODE_FLAGS, missingServerFlags } from './node-flags.js';

describe('the Node flags a server runs with', () => {
  it('are missing when neither the command line nor NODE_OPTIONS gives them', () => {
    expect(missingServerFlags([], '')).toEqual(SERVER_NODE_FLAGS);
    expect(missingServerFlags(['--inspect=127.0.0.1:0'], '--max-old-space-size=4096')).toEqual(SERVER_NODE_FLAGS);
  });

  it('count as given on the command line or in NODE_OPTIONS, with the operator\'s own value or spelling', () => {
    expect(missingServerFlags([...SERVER_NODE_FLAGS], '')).toEqual([]);
    expect(missingServerFlags([], `--enable-source-maps ${SERVER_NODE_FLAGS.join(' ')}`)).toEqual([]);
    expect(missingServerFlags(['--max-semi-space-size=32'], '')).toEqual([]);
    expect(missingServerFlags(['--max_semi_space_size', '4'], '')).toEqual([]);
  });

  it('are the ones npm start gives', () => {
    const { scripts } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.start).toBe(`node ${SERVER_NODE_FLAGS.join(' ')} dist/src/main.js`);
  });
});

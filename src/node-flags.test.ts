import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CALLS_NODE_FLAGS, SERVER_NODE_FLAGS, missingServerFlags, serverNodeFlags } from './node-flags.js';

describe('the Node flags a server runs with', () => {
  it('are missing when neither the command line nor NODE_OPTIONS gives them', () => {
    expect(missingServerFlags(CALLS_NODE_FLAGS, [], '')).toEqual(CALLS_NODE_FLAGS);
    expect(missingServerFlags(CALLS_NODE_FLAGS, ['--inspect=127.0.0.1:0'], '--max-old-space-size=4096')).toEqual(CALLS_NODE_FLAGS);
  });

  it('count as given on the command line or in NODE_OPTIONS, with the operator\'s own value or spelling', () => {
    expect(missingServerFlags(CALLS_NODE_FLAGS, [...CALLS_NODE_FLAGS], '')).toEqual([]);
    expect(missingServerFlags(CALLS_NODE_FLAGS, [], `--enable-source-maps ${CALLS_NODE_FLAGS.join(' ')}`)).toEqual([]);
    expect(missingServerFlags(CALLS_NODE_FLAGS, ['--max-semi-space-size=32'], '')).toEqual([]);
    expect(missingServerFlags(CALLS_NODE_FLAGS, ['--max_semi_space_size', '4'], '')).toEqual([]);
  });

  it("are the calls' only where the calls share the main process's event loop", () => {
    expect(serverNodeFlags('inline')).toEqual(CALLS_NODE_FLAGS);
    expect(serverNodeFlags('separate')).toEqual(SERVER_NODE_FLAGS);
    expect(CALLS_NODE_FLAGS).toEqual(['--max-semi-space-size=8']);
  });

  it('are the ones npm start gives', () => {
    const { scripts } = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.start).toBe(['node', ...SERVER_NODE_FLAGS, 'dist/src/main.js'].join(' '));
  });
});

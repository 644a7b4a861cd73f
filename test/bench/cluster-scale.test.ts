// Keeps bench/cluster-scale.bench.ts from rotting: two nodes on its own
// PostgreSQL, one tenant against two, at a tiny size (PostgreSQL set only,
// like test/bench/bench.test.ts).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { testDb } from '../helpers/database.js';

const root = path.resolve(import.meta.dirname, '../..');
const execFileP = promisify(execFile);

describe.runIf(testDb === 'postgres')('the cluster scale benchmark', () => {
  it('reports room creates of one tenant and of several, on one node and on two', { timeout: 120_000 }, async () => {
    const { stdout } = await execFileP(
      process.execPath,
      ['--import', 'tsx', 'bench/cluster-scale.bench.ts', '--nodes=1,2', '--tenants=2', '--per-node=2', '--seconds=1', '--reps=1'],
      { cwd: root, timeout: 110_000 },
    );
    const rows = stdout.split('\n').filter((line) => line.startsWith('| now |')).map((line) => line.split('|').map((cell) => cell.trim()));
    expect(rows.map((cells) => `${cells[2]} ${cells[3]}`)).toEqual(['1 one tenant', '1 2 tenants', '2 one tenant', '2 2 tenants']);
    for (const cells of rows) expect(Number(cells[4])).toBeGreaterThan(0);
    // Each scenario against itself is 1; one node against itself is 1.
    expect(rows.filter((cells) => cells[3] === '2 tenants').map((cells) => cells[6])).toEqual(['1.00', '1.00']);
    expect(rows.filter((cells) => cells[2] === '1').map((cells) => cells[7])).toEqual(['1.00', '1.00']);
  });
});

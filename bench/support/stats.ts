// Medians (the figures quoted) and the table printing shared by the benchmarks.

export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function fixed(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-';
}

/** A Markdown table, ready to paste into bench/README.md. */
export function markdownTable(header: string[], rows: (string | number)[][]): string {
  const lines = [header, header.map(() => '---'), ...rows.map((row) => row.map(String))];
  return lines.map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

/** Command-line flags: --name=value or --name (true). */
export function flags(argv = process.argv.slice(2)): Map<string, string> {
  const map = new Map<string, string>();
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match) throw new Error(`unknown argument ${arg} (flags look like --name=value)`);
    map.set(match[1]!, match[2] ?? 'true');
  }
  return map;
}

// Single-request latency, for the scale benchmarks: one client, one request at
// a time, so that a figure is the time of the query plan and not of a queue.
import { median } from './stats.js';

export interface Page {
  status: number;
  headers: Headers;
  body: unknown;
  ms: number;
}

export async function get(url: string, token: string): Promise<Page> {
  const started = performance.now();
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = await response.json();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${JSON.stringify(body)}`);
  return { status: response.status, headers: response.headers, body, ms };
}

/** The URL of a Link header relation (RFC 8288), or null. */
export function link(page: Page, rel: string): string | null {
  const header = page.headers.get('link') ?? '';
  for (const part of header.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="([^"]+)"/.exec(part);
    if (match && match[2] === rel) return match[1]!;
  }
  return null;
}

/** Median milliseconds of `times` sequential requests to the same URL (after one unmeasured warm-up). */
export async function timeUrl(url: string, token: string, times: number): Promise<number> {
  await get(url, token);
  const samples: number[] = [];
  for (let i = 0; i < times; i++) samples.push((await get(url, token)).ms);
  return median(samples);
}

/**
 * Follows `next` links `steps` times from `start`; returns the median time per
 * page and the rows' keys in order (to check the walk skips and repeats nothing).
 */
export async function walkNext<T>(start: string, token: string, steps: number, keysOf: (body: unknown) => T[]): Promise<{ ms: number; keys: T[] }> {
  let page = await get(start, token);
  const keys = [...keysOf(page.body)];
  const samples: number[] = [];
  for (let i = 0; i < steps; i++) {
    const next = link(page, 'next');
    if (!next) break;
    page = await get(next, token);
    samples.push(page.ms);
    keys.push(...keysOf(page.body));
  }
  return { ms: median(samples), keys };
}

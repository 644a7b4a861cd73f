// GET /api/rooms pagination (docs/design.md#pagination): the five headers, Link relations
// with absolute URLs that keep other parameters, page/per_page/cursor checks,
// oldest first, and walking every page by following the links.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext, type TestTenant } from '../helpers/app.js';
import { createRoom, expectFieldErrors, parseLinks, pathOf } from '../helpers/api.js';

let ctx: TestContext;
let empty: TestTenant;
let twenty: TestTenant;
let many: TestTenant;
let manyTokens: string[];
const MANY = 23;

beforeAll(async () => {
  ctx = await createTestContext();
  empty = await ctx.tenant();
  twenty = await ctx.tenant();
  many = await ctx.tenant();
  for (let i = 0; i < 20; i++) await createRoom(ctx, twenty.instanceToken, { name: `T${i}` });
  manyTokens = [];
  for (let i = 0; i < MANY; i++) manyTokens.push((await createRoom(ctx, many.instanceToken, { name: `Room ${i}` })).token);
});
afterAll(() => ctx.close());

const list = (url: string, token: string) => ctx.request({ method: 'GET', url, token });
const tokensOf = (res: { json(): { rooms: { token: string }[] } }) => res.json().rooms.map((r) => r.token);

function headers(res: { headers: Record<string, unknown> }) {
  return {
    current: res.headers['current-page'],
    limit: res.headers['page-limit'],
    pages: res.headers['total-pages'],
    count: res.headers['total-count'],
  };
}

describe('edges', () => {
  it('an empty list: 200, no rooms, Total-Pages 1, only first and last links', async () => {
    const res = await list('/api/rooms', empty.instanceToken);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ rooms: [] });
    expect(headers(res)).toEqual({ current: '1', limit: '20', pages: '1', count: '0' });
    const links = parseLinks(res.headers.link);
    expect(Object.keys(links).sort()).toEqual(['first', 'last']);
    expect(links.first).toBe('http://parley.test/api/rooms?page=1');
  });

  it('exactly one full page: no next, no prev', async () => {
    const res = await list('/api/rooms', twenty.instanceToken);
    expect(res.json().rooms).toHaveLength(20);
    expect(headers(res)).toEqual({ current: '1', limit: '20', pages: '1', count: '20' });
    expect(Object.keys(parseLinks(res.headers.link)).sort()).toEqual(['first', 'last']);
  });

  it('the first page has next and last but no prev; oldest first', async () => {
    const res = await list('/api/rooms', many.instanceToken);
    expect(headers(res)).toEqual({ current: '1', limit: '20', pages: '2', count: String(MANY) });
    expect(tokensOf(res)).toEqual(manyTokens.slice(0, 20));
    const links = parseLinks(res.headers.link);
    expect(Object.keys(links).sort()).toEqual(['first', 'last', 'next']);
    for (const url of Object.values(links)) expect(url.startsWith('http://parley.test/api/rooms?')).toBe(true);
  });

  it('the last page by number holds the rest, with prev and no next', async () => {
    const res = await list('/api/rooms?page=2', many.instanceToken);
    expect(res.statusCode).toBe(200);
    expect(tokensOf(res)).toEqual(manyTokens.slice(20));
    expect(headers(res).current).toBe('2');
    const links = parseLinks(res.headers.link);
    expect(Object.keys(links).sort()).toEqual(['first', 'last', 'prev']);
  });

  it('a page beyond the last is 200 with an empty list and links back', async () => {
    const res = await list('/api/rooms?page=7', many.instanceToken);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ rooms: [] });
    expect(headers(res)).toEqual({ current: '7', limit: '20', pages: '2', count: String(MANY) });
    const links = parseLinks(res.headers.link);
    expect(links.next).toBeUndefined();
    expect(new URL(links.prev!).searchParams.get('page')).toBe('2');
    const back = await list(pathOf(links.prev!), many.instanceToken);
    expect(tokensOf(back)).toEqual(manyTokens.slice(20));
  });

  it('per_page 1 and 100 are the bounds', async () => {
    const one = await list('/api/rooms?per_page=1', many.instanceToken);
    expect(tokensOf(one)).toEqual([manyTokens[0]]);
    expect(headers(one)).toEqual({ current: '1', limit: '1', pages: String(MANY), count: String(MANY) });
    const hundred = await list('/api/rooms?per_page=100', many.instanceToken);
    expect(tokensOf(hundred)).toEqual(manyTokens);
    expect(headers(hundred)).toMatchObject({ limit: '100', pages: '1' });
    const middle = await list('/api/rooms?per_page=5&page=3', many.instanceToken);
    expect(tokensOf(middle)).toEqual(manyTokens.slice(10, 15));
  });
});

describe('following Link', () => {
  it('next from the first page reaches every room exactly once, in order', async () => {
    const seen: string[] = [];
    let url: string | undefined = '/api/rooms?per_page=4';
    let pages = 0;
    while (url) {
      const res = await list(url, many.instanceToken);
      expect(res.statusCode).toBe(200);
      seen.push(...tokensOf(res));
      expect(headers(res).current).toBe(String(++pages));
      const next = parseLinks(res.headers.link).next;
      url = next ? pathOf(next) : undefined;
      expect(pages).toBeLessThan(20);
    }
    expect(pages).toBe(6);
    expect(seen).toEqual(manyTokens);
  });

  it('prev from the last page walks back through every room', async () => {
    const first = await list('/api/rooms?per_page=4', many.instanceToken);
    let url: string | undefined = pathOf(parseLinks(first.headers.link).last!);
    const pages: string[][] = [];
    while (url) {
      const res = await list(url, many.instanceToken);
      pages.unshift(tokensOf(res));
      const prev = parseLinks(res.headers.link).prev;
      url = prev ? pathOf(prev) : undefined;
      expect(pages.length).toBeLessThan(20);
    }
    expect(pages.map((p) => p.length)).toEqual([4, 4, 4, 4, 4, 3]);
    expect(pages.flat()).toEqual(manyTokens);
  });

  it('a room created while paging appears once, at the end; none is repeated or skipped', async () => {
    const tenant = await ctx.tenant();
    const tokens: string[] = [];
    for (let i = 0; i < 6; i++) tokens.push((await createRoom(ctx, tenant.instanceToken)).token);
    const page1 = await list('/api/rooms?per_page=4', tenant.instanceToken);
    tokens.push((await createRoom(ctx, tenant.instanceToken)).token);
    const page2 = await list(pathOf(parseLinks(page1.headers.link).next!), tenant.instanceToken);
    expect([...tokensOf(page1), ...tokensOf(page2)]).toEqual(tokens);
  });

  it('a room deleted before the next page does not shift the others', async () => {
    const tenant = await ctx.tenant();
    const tokens: string[] = [];
    for (let i = 0; i < 6; i++) tokens.push((await createRoom(ctx, tenant.instanceToken)).token);
    const page1 = await list('/api/rooms?per_page=3', tenant.instanceToken);
    await ctx.request({ method: 'DELETE', url: `/api/rooms/${tokens[0]}`, token: tenant.instanceToken });
    const page2 = await list(pathOf(parseLinks(page1.headers.link).next!), tenant.instanceToken);
    expect(tokensOf(page2)).toEqual(tokens.slice(3));
  });

  it('links keep the other query parameters and are absolute on PUBLIC_URL', async () => {
    const res = await list('/api/rooms?per_page=5&page=2&utm_source=test&tag=a&tag=b', many.instanceToken);
    const links = parseLinks(res.headers.link);
    expect(Object.keys(links).sort()).toEqual(['first', 'last', 'next', 'prev']);
    for (const [rel, url] of Object.entries(links)) {
      const parsed = new URL(url);
      expect(parsed.origin + parsed.pathname, rel).toBe('http://parley.test/api/rooms');
      expect(parsed.searchParams.get('per_page'), rel).toBe('5');
      expect(parsed.searchParams.get('utm_source'), rel).toBe('test');
      expect(parsed.searchParams.getAll('tag'), rel).toEqual(['a', 'b']);
      expect(parsed.searchParams.getAll('page'), rel).toHaveLength(1);
    }
    expect(new URL(links.first!).searchParams.get('page')).toBe('1');
    expect(new URL(links.prev!).searchParams.get('page')).toBe('1');
    expect(new URL(links.next!).searchParams.get('page')).toBe('3');
    expect(new URL(links.last!).searchParams.get('page')).toBe('5');
  });
});

describe('bad parameters are 400 on that attribute', () => {
  it.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['page=', 'page'],
    ['page=1&page=2', 'page'],
    ['per_page=0', 'per_page'],
    ['per_page=101', 'per_page'],
    ['per_page=ten', 'per_page'],
    ['per_page=2.5', 'per_page'],
    ['cursor=garbage', 'cursor'],
    ['cursor=after:abc', 'cursor'],
    ['cursor=after:99999999999999999999', 'cursor'],
    ['cursor=before:', 'cursor'],
    ['cursor=after:1%27%20OR%201%3D1', 'cursor'],
    [`cursor=${'a'.repeat(500)}`, 'cursor'],
  ])('?%s', async (query, attribute) => {
    const res = await list(`/api/rooms?${query}`, many.instanceToken);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().map((e: { attribute: string }) => e.attribute)).toEqual([attribute]);
  });

  it('reports page and per_page together', async () => {
    const res = await list('/api/rooms?page=0&per_page=1000', many.instanceToken);
    expectFieldErrors(res, { page: 'greater_than_or_equal_to', per_page: 'less_than_or_equal_to' });
  });

  it('unknown query parameters are ignored', async () => {
    const res = await list('/api/rooms?sort=desc&filter[name]=x', many.instanceToken);
    expect(res.statusCode).toBe(200);
    expect(tokensOf(res)).toEqual(manyTokens.slice(0, 20));
  });
});

// Pagination headers (docs/design.md#pagination): Current-Page, Page-Limit, Total-Pages, Total-Count
// and an RFC 8288 Link header with absolute URLs that keep the other query
// parameters and carry the keyset cursor.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { formatCursor, invalidCursor, pageLinks, parseCursor, type PageInfo, type PageRequest } from '../domain/support/pagination.js';

export const DEFAULT_PER_PAGE = 20;

export function pageRequest(query: { page?: number; per_page?: number; cursor?: string }): PageRequest {
  const cursor = parseCursor(query.cursor);
  if (cursor === 'invalid') throw invalidCursor();
  return { page: query.page ?? 1, perPage: query.per_page ?? DEFAULT_PER_PAGE, cursor };
}

export function setPageHeaders(
  request: FastifyRequest,
  reply: FastifyReply,
  publicUrl: string,
  page: { info: PageInfo; firstKey: string | null; lastKey: string | null },
): void {
  const { info } = page;
  const url = new URL(request.url, publicUrl + '/');
  const base = new URL(publicUrl + url.pathname);
  const links = pageLinks(info, page.firstKey, page.lastKey).map(({ rel, page: number, cursor }) => {
    const target = new URL(base);
    for (const [key, value] of url.searchParams) {
      if (key !== 'page' && key !== 'cursor') target.searchParams.append(key, value);
    }
    target.searchParams.set('page', String(number));
    if (cursor) target.searchParams.set('cursor', formatCursor(cursor));
    return `<${target.toString()}>; rel="${rel}"`;
  });
  reply
    .header('Current-Page', String(info.page))
    .header('Page-Limit', String(info.perPage))
    .header('Total-Pages', String(info.totalPages))
    .header('Total-Count', String(info.totalCount))
    .header('Link', links.join(', '));
}

// Page arithmetic shared by the room and feedback lists (docs/design.md#pagination).
// Link URLs carry a keyset cursor next to `page`, so a client that follows
// them never makes the database skip rows; a bare `page=N` still works.
import { ValidationError } from '../../errors.js';

export interface PageRequest {
  page: number;
  perPage: number;
  /** From a Link URL: after:<key> (next), before:<key> (prev) or last. */
  cursor: Cursor | null;
}

export type Cursor = { after: string } | { before: string } | { last: true };

/** How the repository should fetch one page. */
export type PageQuery =
  | { kind: 'offset'; offset: number; limit: number }
  | { kind: 'after'; key: string; limit: number }
  | { kind: 'before'; key: string; limit: number }
  | { kind: 'tail'; limit: number }
  | { kind: 'empty' };

export interface PageInfo {
  page: number;
  perPage: number;
  totalCount: number;
  totalPages: number;
}

export function totalPages(totalCount: number, perPage: number): number {
  return Math.max(1, Math.ceil(totalCount / perPage));
}

export function parseCursor(text: string | undefined): Cursor | null | 'invalid' {
  if (text === undefined) return null;
  if (text === 'last') return { last: true };
  const match = /^(after|before):([A-Za-z0-9_.-]{1,64})$/.exec(text);
  if (!match) return 'invalid';
  return match[1] === 'after' ? { after: match[2]! } : { before: match[2]! };
}

/** The row key a cursor carries (none for `last`): each list checks it has its own key's shape. */
export function cursorKey(cursor: Cursor | null): string | null {
  if (cursor === null || 'last' in cursor) return null;
  return 'after' in cursor ? cursor.after : cursor.before;
}

export function invalidCursor(): ValidationError {
  return ValidationError.of('cursor', 'invalid', 'is not a cursor from a Link URL');
}

export function formatCursor(cursor: Cursor): string {
  if ('last' in cursor) return 'last';
  return 'after' in cursor ? `after:${cursor.after}` : `before:${cursor.before}`;
}

export function pageQuery(request: PageRequest, totalCount: number): PageQuery {
  const { page, perPage, cursor } = request;
  const pages = totalPages(totalCount, perPage);
  if (page > pages || totalCount === 0) return { kind: 'empty' };
  if (cursor && 'after' in cursor) return { kind: 'after', key: cursor.after, limit: perPage };
  if (cursor && 'before' in cursor) return { kind: 'before', key: cursor.before, limit: perPage };
  if ((cursor && 'last' in cursor) || (page === pages && page > 1)) {
    // The last page holds what is left after the full pages before it.
    return { kind: 'tail', limit: totalCount - (pages - 1) * perPage };
  }
  return { kind: 'offset', offset: (page - 1) * perPage, limit: perPage };
}

/** Links for the page: first and last always; prev and next where they exist. */
export function pageLinks(info: PageInfo, firstKey: string | null, lastKey: string | null) {
  const links: { rel: 'first' | 'prev' | 'next' | 'last'; page: number; cursor: Cursor | null }[] = [];
  links.push({ rel: 'first', page: 1, cursor: null });
  if (info.page > 1) {
    const prevPage = Math.min(info.page - 1, info.totalPages);
    links.push({ rel: 'prev', page: prevPage, cursor: firstKey !== null && info.page <= info.totalPages ? { before: firstKey } : null });
  }
  if (info.page < info.totalPages) {
    links.push({ rel: 'next', page: info.page + 1, cursor: lastKey !== null ? { after: lastKey } : null });
  }
  links.push({ rel: 'last', page: info.totalPages, cursor: info.totalPages > 1 ? { last: true } : null });
  return links;
}

// The typed TypeScript client of the REST API (docs/api.md "A typed client"):
// openapi-fetch over the types openapi-typescript generates from
// /api/openapi.json (openapi.d.ts, `npm run client:generate`). Paths, bodies,
// parameters and answers are checked by the compiler; the HTTP is plain fetch.
//
//   const parley = createParleyClient({ baseUrl: 'https://parley.example', token });
//   const { data: room, error } = await parley.POST('/api/rooms', { body: { name, meeting_duration: 30, scheduled_at } });
//
// `error` is the documented error body of the status that came back: the
// array of {attribute, type, message} for 400, {error} otherwise.
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './openapi.js';

export type { components, operations, paths };
export type Room = components['schemas']['Room'];
export type RoomFeedback = components['schemas']['RoomFeedback'];
export type WebhookEndpoint = components['schemas']['WebhookEndpoint'];
export type ParticipantSession = components['schemas']['ParticipantSession'];
export type RoomInput = NonNullable<operations['createRoom']['requestBody']>['content']['application/json'];
export type ParleyClient = Client<paths>;

export interface ParleyClientOptions extends Omit<ClientOptions, 'baseUrl'> {
  /** The instance's public URL, e.g. https://parley.example (no /api). */
  baseUrl: string;
  /** An Instance or Organization API token (or the admin token for /admin). */
  token: string;
}

export function createParleyClient({ baseUrl, token, headers, ...options }: ParleyClientOptions): ParleyClient {
  return createClient<paths>({
    ...options,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    headers: { ...(headers as Record<string, string> | undefined), Authorization: `Bearer ${token}` },
  });
}

export interface Page {
  page: number;
  perPage: number;
  totalPages: number;
  totalCount: number;
  /** The absolute URLs of the Link header by relation (first, prev, next, last). */
  links: Partial<Record<'first' | 'prev' | 'next' | 'last', string>>;
}

/**
 * The pagination headers of a list answer (GET /api/rooms, GET /api/room_feedbacks).
 * Follow `links.next` (its page and cursor query parameters) rather than counting
 * pages: the cursor keeps the walk stable while rooms are created.
 */
export function pageOf(response: Response): Page {
  const number = (name: string) => Number(response.headers.get(name));
  const links: Page['links'] = {};
  for (const [, url, rel] of (response.headers.get('Link') ?? '').matchAll(/<([^>]*)>\s*;\s*rel="([^"]+)"/g)) {
    if (rel === 'first' || rel === 'prev' || rel === 'next' || rel === 'last') links[rel] = url;
  }
  return { page: number('Current-Page'), perPage: number('Page-Limit'), totalPages: number('Total-Pages'), totalCount: number('Total-Count'), links };
}

/** The query of a Link URL, to pass as `params.query` of the next call. */
export function queryOf(link: string): { page?: number; per_page?: number; cursor?: string } {
  const search = new URL(link).searchParams;
  const integer = (name: string) => (search.has(name) ? Number(search.get(name)) : undefined);
  return { page: integer('page'), per_page: integer('per_page'), cursor: search.get('cursor') ?? undefined };
}

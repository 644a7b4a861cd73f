// A small HTTP client for the operator admin API, used by
// `parley admin ...`. Errors come back as CommandFailed with the server's own
// message, so the CLI prints what the API said.
import type { AdminClientConfig } from '../config.js';
import { CommandFailed } from './errors.js';

const TIMEOUT_MS = 15_000;

type FieldErrors = { attribute: string; message: string }[];

function describeError(status: number, body: unknown): string {
  if (Array.isArray(body)) return `${status}: ${(body as FieldErrors).map((e) => `${e.attribute} ${e.message}`).join('; ')}`;
  const message = (body as { error?: unknown } | null)?.error;
  if (status === 404 && message === 'Not found') {
    // The router's 404: the admin routes are not registered at all.
    return '404: no admin API at this address (is PARLEY_ADMIN_TOKEN set on the server, and PARLEY_URL right?)';
  }
  return `${status}: ${typeof message === 'string' ? message : 'unexpected answer'}`;
}

export function createAdminClient({ url, adminToken }: AdminClientConfig) {
  return async function call(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
    let response: Response;
    try {
      response = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const reason = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new CommandFailed(`cannot reach Parley at ${url} (${reason}); is the server running, and is PARLEY_URL right?`);
    }
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      throw new CommandFailed(`${response.status}: the answer from ${url} is not JSON; is PARLEY_URL a Parley server?`);
    }
    if (!response.ok) throw new CommandFailed(describeError(response.status, parsed));
    return parsed;
  };
}

export type AdminCall = ReturnType<typeof createAdminClient>;

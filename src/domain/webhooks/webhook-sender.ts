// One HTTP POST of a webhook (docs/design.md, "Webhooks"): to the address that was checked
// (address-policy.ts), never following a redirect (a 3xx is a failure like
// any non-2xx), within a time limit, reading at most a little of the answer.
// node:http does no redirects and lets us pin the address through `lookup`
// while TLS still verifies the certificate against the URL's host name.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { ResolvedTarget } from './address-policy.js';

/** Enough for an error message; a receiver's answer is never stored. */
const MAX_ANSWER_BYTES = 64 * 1024;

export type SendOutcome = { ok: true; status: number } | { ok: false; status: number | null; error: string };

interface WebhookRequest {
  url: URL;
  target: ResolvedTarget;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/** Answers every lookup of the connection with the checked address. */
function pinned(target: ResolvedTarget): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

export function sendWebhook({ url, target, headers, body, timeoutMs }: WebhookRequest): Promise<SendOutcome> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    const request = client.request(
      url,
      {
        method: 'POST',
        lookup: pinned(target),
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Parley-Webhooks/1' },
        agent: false,
      },
      (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // The status is all that counts: stop reading a large or endless answer.
          if (read >= MAX_ANSWER_BYTES) done();
        });
        const done = () =>
          finish(status >= 200 && status < 300 ? { ok: true, status } : { ok: false, status, error: `HTTP ${status}${status >= 300 && status < 400 ? ' (redirects are not followed)' : ''}` });
        response.on('end', done);
        response.on('error', done);
      },
    );
    // The whole exchange, connecting included, has timeoutMs.
    const timer = setTimeout(() => finish({ ok: false, status: null, error: `no answer within ${Math.ceil(timeoutMs / 1000)} s` }), timeoutMs);
    request.on('error', (error: NodeJS.ErrnoException) => finish({ ok: false, status: null, error: error.code ?? 'connection failed' }));
    request.end(body);
  });
}

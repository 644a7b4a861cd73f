// Delivering the outbox (docs/design.md, "Webhooks"; docs/webhooks.md): run by the `webhooks`
// job on every node; each run claims what is due, POSTs it, and records the
// outcome. At least once: a message leaves the outbox only when a receiver
// answered 2xx, or when its retries are exhausted.
import type { Clock } from '../support/clock.js';
import { resolveTargetWithin } from './address-policy.js';
import { nextAttemptAt } from './retry-schedule.js';
import type { ClaimedMessage, WebhookMessagesRepo } from './webhook-messages.repo.js';
import { sendWebhook, type SendOutcome } from './webhook-sender.js';
import { signWebhook } from './webhook-signature.js';

/** Messages one node sends at once. */
const BATCH = 10;
/** Delivered and given-up messages are kept this long, to be looked at. */
const KEEP_DONE_MS = 7 * 86_400_000;

interface Deps {
  repo: WebhookMessagesRepo;
  clock: Clock;
  allowPrivateNetworks: boolean;
  timeoutSeconds: number;
  disableAfterSeconds: number;
}

/** The body every attempt sends: the same bytes each time, built from what the outbox holds. */
function webhookBody(message: Pick<ClaimedMessage, 'type' | 'occurred_at' | 'data'>): string {
  return JSON.stringify({ type: message.type, timestamp: message.occurred_at.toISOString(), data: message.data });
}

export function createWebhookDeliveryService({ repo, clock, allowPrivateNetworks, timeoutSeconds, disableAfterSeconds }: Deps) {
  // Longer than any attempt can take, so that a live node always records its outcome before another may try.
  const leaseMs = timeoutSeconds * 3000;

  async function attempt(message: ClaimedMessage): Promise<SendOutcome> {
    // The whole attempt, the name's lookup included, fits in the time limit (real time,
    // not the injected clock: it is the network's), so it always ends within its lease.
    const deadline = Date.now() + timeoutSeconds * 1000;
    const url = new URL(message.url);
    // Resolved and checked now, and the POST goes to that address (address-policy.ts).
    const target = await resolveTargetWithin(url, allowPrivateNetworks, deadline - Date.now());
    if ('refused' in target) return { ok: false, status: null, error: `refused: ${target.refused}` };
    const body = webhookBody(message);
    const timestamp = Math.floor(clock.now().getTime() / 1000);
    return sendWebhook({
      url,
      target,
      body,
      timeoutMs: Math.max(1, deadline - Date.now()),
      headers: {
        'webhook-id': message.msg_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(message.secret, message.msg_id, timestamp, body),
      },
    });
  }

  async function deliver(message: ClaimedMessage): Promise<SendOutcome> {
    const outcome = await attempt(message).catch((error: unknown): SendOutcome => ({ ok: false, status: null, error: String((error as Error).message ?? error) }));
    const at = clock.now();
    if (outcome.ok) {
      await repo.delivered(message.id, message.attempts, message.endpoint_id, at, outcome.status);
    } else {
      await repo.failed(
        { id: message.id, attempt: message.attempts, endpointId: message.endpoint_id },
        { at, status: outcome.status, error: outcome.error.slice(0, 500), retryAt: nextAttemptAt(message.attempts, at) },
        new Date(at.getTime() - disableAfterSeconds * 1000),
      );
    }
    return outcome;
  }

  return {
    /** Sends everything due now, batch after batch; the outcomes, endpoint by endpoint. */
    async deliverDue(): Promise<SendOutcome[]> {
      const outcomes: SendOutcome[] = [];
      for (;;) {
        const now = clock.now();
        const claimed = await repo.claim(now, new Date(now.getTime() + leaseMs), BATCH);
        // One endpoint's messages one after the other, in the order of their events; endpoints side by side.
        const byEndpoint = new Map<string, ClaimedMessage[]>();
        for (const message of claimed) byEndpoint.set(message.endpoint_id, [...(byEndpoint.get(message.endpoint_id) ?? []), message]);
        const sent = await Promise.all(
          [...byEndpoint.values()].map(async (messages) => {
            const results: SendOutcome[] = [];
            for (const message of messages) results.push(await deliver(message));
            return results;
          }),
        );
        outcomes.push(...sent.flat());
        if (claimed.length < BATCH) return outcomes;
      }
    },

    purgeDone: () => repo.purge(new Date(clock.now().getTime() - KEEP_DONE_MS)),
  };
}

export type WebhookDeliveryService = ReturnType<typeof createWebhookDeliveryService>;

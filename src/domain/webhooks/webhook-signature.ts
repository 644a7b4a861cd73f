// Standard Webhooks signing (https://www.standardwebhooks.com; docs/design.md, "Webhooks"):
// `v1,` + base64 HMAC-SHA256 over `{id}.{timestamp}.{body}`, keyed with the
// decoded bytes of the secret after its `whsec_` prefix.
import { createHmac, randomBytes } from 'node:crypto';

const PREFIX = 'whsec_';
/** 32 bytes: above the 24 that docs/design.md, "Webhooks" asks for, and the size of the HMAC-SHA256 output. */
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

export function signWebhook(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64');
  return 'v1,' + createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64');
}

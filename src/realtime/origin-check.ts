// Cross-site WebSocket hijacking: a browser always sends Origin with a
// WebSocket upgrade and lets any page open one, so the upgrade itself must
// come from this service's own pages (PUBLIC_URL's origin and ALLOWED_ORIGINS, src/config.ts; docs/security.md).
// Checked wherever an upgrade arrives: ws-server.ts (calls in this process)
// and src/calls-process/hand-off.ts (calls in their own process).

/** Why an upgrade from `origin` is refused, or null when one of our pages sent it. */
export function refusedOrigin(allowedOrigins: readonly string[], origin: string | undefined): string | null {
  return allowedOrigins.includes(origin ?? '') ? null : "WebSocket connections are accepted from this service's own pages only";
}

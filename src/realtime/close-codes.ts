/** WebSocket close codes the browser acts on (4000-4999 are for applications, RFC 6455 §7.4.2). */
export const CloseCode = {
  normal: 1000,
  goingAway: 1001,
  roomClosed: 4001,
  replaced: 4002,
  joinTimeout: 4003,
  /** Too many join attempts with unknown links on one connection (guessing). */
  notFound: 4004,
  /** A host did not let this participant in from the waiting room. */
  denied: 4005,
  /** A host removed this participant from the call. */
  removed: 4006,
  /** Kept flooding after being told to slow down (RFC 6455 §7.4.1: policy violation). */
  policy: 1008,
} as const;

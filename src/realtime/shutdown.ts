// The graceful stop of a hub, before the HTTP server and the database close.
import { CloseCode } from './close-codes.js';
import type { HubContext } from './hub-context.js';

/**
 * Tells everyone the server is going away (1001, on which browsers reconnect
 * and resume elsewhere), records their leave, waits for the database. A join
 * still in flight is ended the same way when it lands (it finds its session ended).
 */
export async function shutdownHub(ctx: HubContext): Promise<void> {
  const sessions = [...ctx.open];
  for (const session of sessions) ctx.endSession(session, CloseCode.goingAway, 'server restarting');
  await Promise.all([
    ...sessions.map((s) => (s.participant ? ctx.departures.markLeft(s.participant, s) : undefined)),
    ctx.departures.leaveAllHeld(),
  ]);
  await ctx.inFlight.settled();
}

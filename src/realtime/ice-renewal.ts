// Fresh TURN credentials for the participants in a call. Those a page got
// with `joined` expire TURN_TTL_SECONDS later. A relay allocated while they
// were valid lives on after that (coturn checks them when the allocation is
// made; its refreshes were seen to succeed after the expiry), but every new
// allocation needs valid ones: the connection a host alone in the room keeps
// for the first to come, and both sides of every ICE restart (the other side
// changed networks). Without renewal, a host who waited alone for longer than
// the TTL could not answer through a relay at all, and a relayed call longer
// than it could not recover from a network change.
import type { HubContext } from './hub-context.js';
import { reply, type Session } from './session.js';

/** From now on, while the session is in the call, it gets fresh ICE servers every `iceRenewalMs` (none without TURN). */
export function keepIceServersFresh(ctx: HubContext, session: Session): void {
  const every = ctx.options.iceRenewalMs;
  if (!every || session.iceRenewal) return;
  session.iceRenewal = setInterval(() => {
    if (session.state !== 'joined' || !session.participant) return;
    reply(session, { type: 'ice-servers', iceServers: ctx.options.iceServersFor(session.participant.peerId) });
  }, every);
  session.iceRenewal.unref();
}

/** The connection closed: nothing more is sent to it. */
export function stopIceRenewal(session: Session): void {
  if (session.iceRenewal) clearInterval(session.iceRenewal);
  session.iceRenewal = null;
}

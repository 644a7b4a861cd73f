// Staying the same participant while the connection comes and goes. The
// signaling socket reconnects by itself (../signaling.ts); on every open the
// page joins again with its participant token, kept in sessionStorage so a
// reload resumes too (in memory where the browser refuses storage, so then
// only within the page: ../storage.ts), and the server puts it back into the
// call as itself.
// In a room with a waiting room, a guest's join is answered `waiting`; the
// same token (kept across drops and reloads) holds its place, and `admitted`
// later puts it into the call as a join would. What ends the call for good
// (closed, deleted, opened elsewhere, refused, turned away by the host) is
// told once through onEnd.
import type { CallEntry, ServerMessage } from '../../../src/shared/protocol.js';
import { Signaling, signalingUrl } from '../signaling.js';
import { errorText, t } from '../i18n.js';
import { sessionStore } from '../storage.js';

/** `offeredTo`: in the reply to a join that carried an offer (CallConnectionOptions.firstOffer), the peer it went to. */
export type Joined = CallEntry & { offeredTo?: string };
export type Waiting = Extract<ServerMessage, { type: 'waiting' }>;
export type EndKind = 'closed' | 'deleted' | 'replaced' | 'refused' | 'denied' | 'removed';

export interface CallConnectionOptions {
  joinToken: string;
  displayName: string;
  /** A signaling connection opened ahead (warmSocket), if one is usable. */
  socket: WebSocket | null;
  /** The SDP of this page's first offer, sent with a new participant's join (Mesh.spareOffer), or null. */
  firstOffer(): string | null;
  /** The signaling connection was lost; a new one is on its way. */
  onDown(): void;
  /** The server could not let us in just now (its database restarting): the join is tried again by itself. */
  onJoinDelayed(): void;
  /** A probe of the connection went unanswered for a moment (true), or was answered after all (false). */
  onDoubt(inDoubt: boolean): void;
  /** Joined, for the first time or again after a drop (`joined.resumed`), or let in from the waiting room. */
  onJoined(joined: Joined): Promise<void>;
  /** Waiting for a host to let this participant in (again, after a drop). */
  onWaiting(waiting: Waiting): void;
  onMessage(message: ServerMessage): void;
  onEnd(kind: EndKind, message?: string, code?: string): void;
}

export interface CallConnection {
  signaling: Signaling;
  joined(): Joined | null;
  /** Where this participant goes after the call or the wait, once the server said. */
  returnUrl(): string | null;
  /** Forgets the participant token: the next visit joins as someone new. */
  forget(): void;
}

const storageKey = (joinToken: string) => `parley:participant:${joinToken}`;
const nameKey = (joinToken: string) => `parley:name:${joinToken}`;

/** The name this tab joined with through this link, for a reload mid-call to offer again. */
export function rememberedName(joinToken: string): string | null {
  return sessionStore.get(nameKey(joinToken));
}

/** After the server answered a join `unavailable`, the next try on the same connection waits this long, then longer, up to 3 s. */
const JOIN_RETRY_MS = [500, 1000, 2000, 3000];

export function connectCall(options: CallConnectionOptions): CallConnection {
  let joined: Joined | null = null;
  let waiting: Waiting | null = null;
  let closedReason: 'closed' | 'deleted' | null = null;
  /** Counts the connection's opens: a retry belongs to the open it was planned on. */
  let opens = 0;

  const signaling = new Signaling(signalingUrl(), {
    onOpen: () => void join(++opens),
    onDown: () => options.onDown(),
    onDoubt: (inDoubt) => options.onDoubt(inDoubt),
    onFinalClose: (code) => {
      if (code === 4001) return options.onEnd(closedReason === 'deleted' ? 'deleted' : 'closed');
      if (code === 4002) return options.onEnd('replaced');
      if (code === 4005) return options.onEnd('denied');
      if (code === 4006) return options.onEnd('removed');
    },
    onMessage: (message) => {
      // The reason comes just before the server closes the socket with 4001.
      if (message.type === 'room-closed') closedReason = message.reason;
      if (message.type === 'admitted') return void enter(message);
      if (message.type === 'denied' || message.type === 'removed') return options.onEnd(message.type);
      options.onMessage(message);
    },
  });

  function remember(participantToken: string, name: string) {
    sessionStore.set(storageKey(options.joinToken), participantToken);
    sessionStore.set(nameKey(options.joinToken), name);
  }

  async function enter(entry: Joined) {
    joined = entry;
    waiting = null;
    remember(entry.participantToken, entry.self.name);
    await options.onJoined(entry);
  }

  async function join(open: number, attempt = 0) {
    const participantToken = joined?.participantToken ?? waiting?.participantToken ?? sessionStore.get(storageKey(options.joinToken));
    // Only someone new brings an offer: a resume keeps its connections.
    const offer = participantToken ? null : options.firstOffer();
    const reply = await signaling.request({
      type: 'join',
      joinToken: options.joinToken,
      displayName: options.displayName,
      ...(participantToken ? { participantToken } : {}),
      ...(offer ? { offer } : {}),
    });
    if (reply.type === 'waiting') {
      waiting = reply;
      remember(reply.participantToken, reply.self.name);
      return options.onWaiting(reply);
    }
    if (reply.type !== 'joined') {
      if (reply.type === 'error' && reply.code === 'unavailable') {
        // No answer (requestId ''): the socket dropped or is being replaced, and the next open joins again.
        // The server's own answer: it could not reach its database; the socket is fine, so try again on it.
        if (!reply.requestId) return;
        options.onJoinDelayed();
        setTimeout(() => {
          if (open === opens && signaling.healthy) void join(open, attempt + 1);
        }, JOIN_RETRY_MS[Math.min(attempt, JOIN_RETRY_MS.length - 1)]);
        return;
      }
      signaling.close();
      if (reply.type === 'error' && (reply.code === 'denied' || reply.code === 'removed')) return options.onEnd(reply.code);
      return options.onEnd('refused', reply.type === 'error' ? errorText(reply.code) : t('call.joinFailed'), reply.type === 'error' ? reply.code : undefined);
    }
    await enter(reply);
  }

  return {
    signaling,
    joined: () => joined,
    returnUrl: () => joined?.returnUrl ?? waiting?.returnUrl ?? null,
    forget: () => {
      sessionStore.remove(storageKey(options.joinToken));
      sessionStore.remove(nameKey(options.joinToken));
    },
  };
}

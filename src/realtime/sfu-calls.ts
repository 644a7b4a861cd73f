// The SFU side of this node's calls (docs/design.md, "Group calls through an
// SFU"): for each participant connected here, its publications (camera,
// screen) and its one subscription in the room's Janus VideoRoom. Parley
// drives Janus; the browser only exchanges JSEP with Parley. A publication is
// named after its participant (`<peerId>/<kind>`), so that what a
// subscription carries is told apart by participant without a lookup.
// Whenever a publisher comes or goes, every subscription here in that room is
// brought up to date and its browser gets Janus's new offer. A room nobody
// here uses any more loses its VideoRoom after a while (sfu-empty-rooms.ts).
import type { FastifyBaseLogger } from 'fastify';
import type { SfuPin } from '../domain/sfu/sfu-rooms.repo.js';
import { janusAnswers, type HandleEvent, type JanusHandle } from '../sfu/janus-client.js';
import type { JanusInstances } from '../sfu/janus-instances.js';
import { joinAsPublisher, joinAsSubscriber, listPublishers, type Publisher, type Subscriber } from '../sfu/video-room.js';
import type { ServerMessage, SfuEntry, SfuKind, SfuStream } from '../shared/protocol.js';
import type { Session } from './session.js';
import { createEmptyRooms, isRoomGone } from './sfu-empty-rooms.js';
import { createSfuRecording } from './sfu-recording.js';

interface SfuState {
  roomId: number;
  peerId: string;
  pin: SfuPin;
  publications: Map<SfuKind, Publisher>;
  subscriber: Subscriber | null;
  /** The browser asked for the subscription (sfu-subscribe): it gets one as soon as someone else publishes. */
  subscribing: boolean;
  /** Work on this participant's handles, one at a time: Janus answers a handle's requests in order, a browser's JSEP too. */
  queue: Promise<unknown>;
  /** Settles when the browser answered the subscription's latest offer: the next update waits for it (one negotiation at a time). */
  answered: Promise<void>;
  answer: () => void;
}

/** How long an update of a subscription waits for the browser's answer to the previous offer. */
const ANSWER_WAIT_MS = 5000;
/** A lost room's move is tried again after 100 ms, then every 250 ms, for `lostRoomMs` (SFU_LOST_ROOM_SECONDS); its pages are told once it is done. */
const FIRST_MOVE_RETRY_MS = 100;
const LONGEST_MOVE_RETRY_MS = 250;
/** Before moving, the instances are asked for `info` this often until one answers (a local Janus starting again; a refused connection costs nothing, a move three queries). */
const ANSWERING_POLL_MS = 25;

export interface SfuCalls {
  /** What `joined` and `admitted` tell the pages of the SFU: its threshold, and whether they keep their path warm below it (SFU_WARM). */
  readonly entry: SfuEntry;
  publish(session: Session, kind: SfuKind, offer: string): Promise<string>;
  unpublish(session: Session, kind: SfuKind): Promise<void>;
  subscribe(session: Session): Promise<{ sdp: string | null; streams: SfuStream[] }>;
  answer(session: Session, sdp: string): Promise<void>;
  trickle(session: Session, target: SfuKind | 'subscription', candidate: Record<string, unknown> | null): Promise<void>;
  layer(session: Session, mid: string, substream: 0 | 1 | 2): Promise<void>;
  /** The participant goes back to peer to peer, or its connection is gone: its publications and subscription go. */
  leave(session: Session): Promise<void>;
  /**
   * Records this participant's publications, now and any it makes later, as
   * `<base>-<kind>` (docs/design.md, "Recording with consent"), or stops (null).
   */
  record(session: Session, base: string | null): Promise<void>;
  /** The room was closed or deleted: its VideoRoom goes (a deleted room's pin went with its row: the one known here is used). */
  roomGone(roomId: number): Promise<void>;
  /** Hears of a room whose Janus was lost and that no instance took within SFU_LOST_ROOM_SECONDS (its recording ends: recording-sync.ts). */
  onRoomLost(listener: (roomId: number) => void): void;
  close(): Promise<void>;
}

export const displayOf = (peerId: string, kind: SfuKind) => `${peerId}/${kind}`;

function parseDisplay(display: string): { peerId: string; kind: SfuKind } | null {
  const [peerId, kind] = display.split('/');
  return peerId && (kind === 'camera' || kind === 'screen') ? { peerId, kind } : null;
}

/** An offer went to the browser: the next update waits for its answer. */
function expectAnswer(state: SfuState): void {
  state.answered = new Promise((resolve) => {
    state.answer = resolve;
  });
}

/** Whose media each mid of a subscription carries, as the page needs it. */
const streamsOf = (subscriber: Subscriber): SfuStream[] =>
  subscriber.streams.flatMap((stream) => {
    const who = parseDisplay(stream.display);
    return who && (stream.type === 'audio' || stream.type === 'video') ? [{ mid: stream.mid, peerId: who.peerId, kind: who.kind, media: stream.type }] : [];
  });

/** Any handle of this participant, to ask the room who publishes. */
const someHandle = (state: SfuState): JanusHandle | null => state.publications.values().next().value?.handle ?? state.subscriber?.handle ?? null;

/** Work on a participant's handles, one at a time (SfuState.queue). */
function serially<T>(state: SfuState, work: () => Promise<T>): Promise<T> {
  const next = state.queue.then(work, work);
  state.queue = next.catch(() => undefined);
  return next;
}

/** A participant whose VideoRoom was destroyed under it (it stood empty) starts from a fresh pin on its page's next try. */
const forgetIfRoomGone = (states: Map<Session, SfuState>, session: Session, state: SfuState) => (error: unknown) => {
  if (isRoomGone(error) && states.get(session) === state) states.delete(session);
  throw error;
};

/** Moves the room, again and again with a short backoff while no instance takes it, until `until` (`lostRoomMs` after the loss); false when none did. */
async function moveSoon(instances: JanusInstances, log: FastifyBaseLogger, roomId: number, pin: SfuPin, until: number): Promise<boolean> {
  for (let wait = FIRST_MOVE_RETRY_MS; ; wait = Math.min(wait * 2, LONGEST_MOVE_RETRY_MS)) {
    try {
      await instances.move(pin);
      return true;
    } catch (error) {
      if (Date.now() + wait > until) {
        log.warn({ err: error, room: roomId }, 'sfu room could not move yet');
        return false;
      }
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

/** Resolves once one of the instances answers `info` (polled every ANSWERING_POLL_MS), or at `until`. */
async function someAnswers(urls: readonly string[], until: number): Promise<void> {
  while (Date.now() < until) {
    const asked = urls.map((url) => janusAnswers(url, 1000).then((answers) => answers || Promise.reject(new Error('not answering'))));
    if (await Promise.any(asked).catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, ANSWERING_POLL_MS));
  }
}

/**
 * A room whose instance was lost moves once per node, and its browsers here start their SFU path again once
 * the move is done: told at once, while a local Janus is still starting again, every page failed its first try
 * and waited a second for the next (bench/README.md, "Issue 41: faults"). A room no instance took within
 * `lostRoomMs` (SFU_LOST_ROOM_SECONDS) is `roomLost`: nothing of it can be recorded (docs/design.md, "Recording with consent").
 */
function moveLostRooms(instances: JanusInstances, states: Map<Session, SfuState>, lostRoomMs: number, log: FastifyBaseLogger, send: (session: Session, message: ServerMessage) => void, roomLost: (roomId: number) => void): void {
  instances.onLost((instance) => {
    const lost = [...states].filter(([, state]) => state.pin.instance === instance);
    for (const [session] of lost) states.delete(session);
    // One deadline for the wait and the move: a room no instance takes is lost `lostRoomMs` after the loss.
    const until = Date.now() + lostRoomMs;
    const answering = someAnswers(instances.urls, until);
    for (const [roomId, pin] of new Map(lost.map(([, state]) => [state.roomId, state.pin]))) {
      void answering.then(() => moveSoon(instances, log, roomId, pin, until)).then((moved) => {
        if (!moved) roomLost(roomId);
        for (const [session, state] of lost) if (state.roomId === roomId) send(session, { type: 'sfu-restart' });
      });
    }
  });
}

interface SfuCallsOptions {
  instances: JanusInstances;
  minParticipants: number;
  warm: boolean;
  /** A room nobody here uses for this long loses its VideoRoom (SFU_EMPTY_ROOM_SECONDS; sfu-empty-rooms.ts). */
  emptyRoomMs: number;
  /** A room whose Janus was lost and that no instance took within this long is lost (SFU_LOST_ROOM_SECONDS; `moveLostRooms`). */
  lostRoomMs: number;
  log: FastifyBaseLogger;
  send(session: Session, message: ServerMessage): void;
}

export function createSfuCalls(options: SfuCallsOptions): SfuCalls {
  const { instances, log } = options;
  const states = new Map<Session, SfuState>();
  const emptyRooms = createEmptyRooms({ instances, emptyRoomMs: options.emptyRoomMs, log, inUse: (roomId) => [...states.values()].some((state) => state.roomId === roomId) });
  const recording = createSfuRecording();

  async function stateOf(session: Session): Promise<SfuState> {
    const existing = states.get(session);
    if (existing) return existing;
    const participant = session.participant!;
    emptyRooms.used(participant.roomId);
    const pin = await instances.room(participant.roomId);
    const made: SfuState = states.get(session) ?? { roomId: participant.roomId, peerId: participant.peerId, pin, publications: new Map(), subscriber: null, subscribing: false, queue: Promise.resolve(), answered: Promise.resolve(), answer: () => {} };
    states.set(session, made);
    return made;
  }

  /** Brings the subscription up to date with who publishes in the room now; the browser gets Janus's offer when it changed. */
  async function sync(session: Session, state: SfuState): Promise<{ sdp: string | null; streams: SfuStream[] } | null> {
    if (!state.subscribing) return null;
    const janus = await instances.session(state.pin.instance);
    let handle = someHandle(state);
    const temporary = handle ? null : await janus.attach('janus.plugin.videoroom');
    handle ??= temporary!;
    const feeds = await listPublishers(handle, state.pin).finally(() => temporary?.detach());
    const wanted = feeds.filter((feed) => parseDisplay(feed.display) && parseDisplay(feed.display)!.peerId !== state.peerId).map((feed) => feed.id);
    if (!state.subscriber) {
      if (!wanted.length) return { sdp: null, streams: [] };
      state.subscriber = await joinAsSubscriber(janus, state.pin, wanted, (event) => heard(session, state, event));
      expectAnswer(state);
      return { sdp: state.subscriber.offer.sdp, streams: streamsOf(state.subscriber) };
    }
    const current = [...new Set(state.subscriber.streams.map((stream) => stream.feed))];
    const add = wanted.filter((feed) => !current.includes(feed));
    const remove = current.filter((feed) => !wanted.includes(feed));
    if (!add.length && !remove.length) return null;
    await Promise.race([state.answered, new Promise((resolve) => setTimeout(resolve, ANSWER_WAIT_MS))]);
    const offer = await state.subscriber.update(add, remove);
    if (offer) expectAnswer(state);
    return offer ? { sdp: offer.sdp, streams: streamsOf(state.subscriber) } : null;
  }

  /** Someone's publication came or went in a room: every subscription here in it follows. */
  function roomChanged(roomId: number) {
    for (const [session, state] of states) if (state.roomId === roomId && state.subscribing) follow(session, state);
  }

  /** One subscription follows who publishes now (after the participant's work in hand); its browser gets the new offer, if any. */
  function follow(session: Session, state: SfuState) {
    serially(state, () => sync(session, state))
      .then((offer) => offer && options.send(session, { type: 'sfu-offer', sdp: offer.sdp, streams: offer.streams }))
      .catch((error: unknown) => log.warn({ err: error, room: state.roomId }, 'sfu subscription update failed'));
  }

  function heard(_session: Session, state: SfuState, event: HandleEvent) {
    const data = event.data ?? {};
    const changed = Array.isArray(data.publishers) || data.unpublished !== undefined || data.leaving !== undefined;
    if (event.janus === 'event' && changed) roomChanged(state.roomId);
  }

  const roomLostListeners: ((roomId: number) => void)[] = [];
  moveLostRooms(instances, states, options.lostRoomMs, log, options.send, (roomId) => roomLostListeners.forEach((listener) => listener(roomId)));

  async function leave(session: Session): Promise<void> {
    // Back to peer to peer keeps what to record for the next publication; a connection gone needs it no more.
    if (session.state === 'gone') recording.forget(session);
    const state = states.get(session);
    if (!state) return;
    states.delete(session);
    emptyRooms.left(state.roomId, state.pin);
    await serially(state, async () => {
      await Promise.all([...state.publications.values()].map((publication) => publication.leave()));
      await state.subscriber?.leave();
    });
  }

  return {
    entry: { minParticipants: options.minParticipants, warm: options.warm },
    async publish(session, kind, offer) {
      const state = await stateOf(session);
      return serially(state, async () => {
        await state.publications.get(kind)?.leave();
        const publisher = await joinAsPublisher(await instances.session(state.pin.instance), state.pin, displayOf(state.peerId, kind), (event) => heard(session, state, event));
        state.publications.set(kind, publisher);
        // Those already publishing when this handle joined send it no news of themselves: the subscription catches up.
        if (publisher.others.length && state.subscribing) follow(session, state);
        const answer = (await publisher.publish({ type: 'offer', sdp: offer })).sdp;
        await recording.published(session, kind, publisher);
        return answer;
      }).catch(forgetIfRoomGone(states, session, state));
    },
    async record(session, base) {
      const apply = recording.set(session, base);
      const state = states.get(session);
      if (apply && state) await serially(state, () => apply(state.publications));
    },
    async unpublish(session, kind) {
      const state = states.get(session);
      if (!state) return;
      await serially(state, async () => {
        await state.publications.get(kind)?.leave();
        state.publications.delete(kind);
      });
    },
    async subscribe(session) {
      const state = await stateOf(session);
      state.subscribing = true;
      // Asked again (after a restart of the page's side): a fresh subscription, from the start.
      return serially(state, async () => {
        await state.subscriber?.leave();
        state.subscriber = null;
        return (await sync(session, state)) ?? { sdp: null, streams: [] };
      }).catch(forgetIfRoomGone(states, session, state));
    },
    async answer(session, sdp) {
      const state = states.get(session);
      // Not queued: an update waiting in the queue for this very answer would wait for ever.
      await state?.subscriber?.start({ type: 'answer', sdp });
      state?.answer();
    },
    async trickle(session, target, candidate) {
      const state = states.get(session);
      const handle = target === 'subscription' ? state?.subscriber?.handle : state?.publications.get(target)?.handle;
      // A candidate for a handle not made yet is lost: Janus gathers its own and the browser's host candidate is in its SDP.
      await handle?.trickle(candidate);
    },
    async layer(session, mid, substream) {
      const state = states.get(session);
      if (state?.subscriber) await serially(state, () => state.subscriber!.layer(mid, substream));
    },
    leave,
    async roomGone(roomId) {
      const here = [...states].filter(([, state]) => state.roomId === roomId);
      await Promise.all(here.map(([session]) => leave(session)));
      // Released now, not after the wait.
      emptyRooms.used(roomId);
      await instances.release(roomId, here[0]?.[1].pin ?? null);
    },
    onRoomLost: (listener) => void roomLostListeners.push(listener),
    async close() {
      await Promise.all([...states.keys()].map((session) => leave(session).catch(() => undefined)));
      emptyRooms.close();
      await instances.close();
    },
  };
}

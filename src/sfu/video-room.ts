// Janus's VideoRoom plugin, as Parley uses it (docs/design.md, "Group calls
// through an SFU"): rooms created with a secret only Parley knows, one
// publisher handle per publication (a camera, a screen), one subscriber
// handle per browser carrying every stream it receives.
import type { HandleEvent, JanusHandle, JanusSession, Jsep } from './janus-client.js';
import { JanusError } from './janus-client.js';

export const VIDEOROOM = 'janus.plugin.videoroom';
/** VideoRoom's "room exists" (427) and "no such room" (426) error codes. */
const ROOM_EXISTS = 427;
const NO_SUCH_ROOM = 426;

export interface VideoRoomRef {
  janusRoom: number;
  secret: string;
}

/** A publisher in the room: its feed id, and who it is (`display`: the participant's id, and `/screen` for a screen share). */
export interface Feed {
  id: number;
  display: string;
}

const feedsOf = (list: unknown): Feed[] =>
  Array.isArray(list) ? list.filter((p) => typeof p?.id === 'number').map((p) => ({ id: p.id as number, display: String(p.display ?? '') })) : [];

/** Creates the VideoRoom; one that exists already (another node made it a moment before) is fine. */
export async function createVideoRoom(session: JanusSession, ref: VideoRoomRef, publishers: number): Promise<void> {
  const handle = await session.attach(VIDEOROOM);
  try {
    await handle.request({
      request: 'create',
      room: ref.janusRoom,
      secret: ref.secret,
      // Nobody may join without Parley: a PIN-less but private room, whose id and secret stay on the server.
      is_private: true,
      publishers,
      // Simulcast from Chromium and Firefox is VP8's; Opus for the voice, with levels for the audio indicator.
      videocodec: 'vp8',
      audiocodec: 'opus',
      audiolevel_ext: true,
      // A room lives as long as its call: Janus does not write it to its configuration.
      permanent: false,
      // Nobody is recorded unless asked (docs/design.md, "Recording with consent"): the room records no one, and a
      // publisher's recording is switched on or off only by a configure that carries the room's secret.
      record: false,
      lock_record: true,
      notify_joining: false,
    });
  } catch (error) {
    if (!(error instanceof JanusError && error.code === ROOM_EXISTS)) throw error;
  } finally {
    await handle.detach();
  }
}

export async function destroyVideoRoom(session: JanusSession, ref: VideoRoomRef): Promise<void> {
  const handle = await session.attach(VIDEOROOM);
  try {
    await handle.request({ request: 'destroy', room: ref.janusRoom, secret: ref.secret, permanent: false });
  } catch (error) {
    if (!(error instanceof JanusError && error.code === NO_SUCH_ROOM)) throw error;
  } finally {
    await handle.detach();
  }
}

/** Whether the room is still there (an instance restarted has none of its rooms). */
export async function videoRoomExists(session: JanusSession, ref: VideoRoomRef): Promise<boolean> {
  const handle = await session.attach(VIDEOROOM);
  try {
    return (await handle.request({ request: 'exists', room: ref.janusRoom })).exists === true;
  } finally {
    await handle.detach();
  }
}

export interface Publisher {
  handle: JanusHandle;
  /** This publication's feed id in the room. */
  id: number;
  /** The publishers already in the room when it joined. */
  others: Feed[];
  /** Sends the browser's offer; Janus's answer comes back. */
  publish(offer: Jsep): Promise<Jsep>;
  /**
   * Starts or stops recording this publication (docs/design.md, "Recording with consent"). `filenameBase` is
   * absolute, `<rawDir>/<peerId>-<kind>` (kind camera or screen). Janus 1.1.2 writes one `.mjr` per medium,
   * named `<base>-<audio|video>-<mindex>.mjr` with the m-line's index, making the folder if missing; a start
   * again with the same base would write over the earlier files, so each start is a part of its own:
   * base = `<filenameBase>.<startedMs>`, e.g. `<rawDir>/p1-camera.1764380000000-audio-0.mjr`
   * (read by `listRecordedMedia` in `recording/mjr-files.ts`). Stopping closes the files.
   */
  record(on: boolean, filenameBase?: string): Promise<void>;
  leave(): Promise<void>;
}

/**
 * Joins the room as a publisher named `display`. `onEvent` hears the room's
 * news for this handle: publishers arriving (`publishers`), leaving
 * (`unpublished`, `leaving`), and the media's state (`webrtcup`, `hangup`).
 */
export async function joinAsPublisher(session: JanusSession, ref: VideoRoomRef, display: string, onEvent: (event: HandleEvent) => void): Promise<Publisher> {
  const handle = await session.attach(VIDEOROOM, onEvent);
  try {
    const joined = await handle.message({ request: 'join', ptype: 'publisher', room: ref.janusRoom, display });
    const id = joined.data.id as number;
    return {
      handle,
      id,
      others: feedsOf(joined.data.publishers),
      async publish(offer) {
        const configured = await handle.message({ request: 'publish', audio: true, video: true, display }, offer);
        if (!configured.jsep) throw new JanusError(0, 'publish was answered without a JSEP answer');
        return configured.jsep;
      },
      async record(on, filenameBase) {
        if (on && !filenameBase) throw new Error('record(true) needs the base of the files to write');
        const filename = on ? `${filenameBase}.${Date.now()}` : undefined;
        await handle.message({ request: 'configure', record: on, ...(filename ? { filename } : {}), secret: ref.secret });
      },
      async leave() {
        await handle.message({ request: 'leave' }).catch(() => undefined);
        await handle.detach();
      },
    };
  } catch (error) {
    await handle.detach();
    throw error;
  }
}

/** One stream a subscriber receives: which feed, and which simulcast layer (0 the lowest). */
export interface SubscribedStream {
  feed: number;
  mid?: string;
  substream?: 0 | 1 | 2;
}

export interface Subscriber {
  handle: JanusHandle;
  /** Janus's offer of the streams asked for. */
  offer: Jsep;
  /** Which mid carries which feed's media (Janus's `streams` list). */
  streams: SubscribedMedia[];
  /** The browser's answer: media flows after it. */
  start(answer: Jsep): Promise<void>;
  /** Streams added (each a feed's, all its media), or removed by feed: Janus's new offer comes back. */
  update(add: number[], remove: number[]): Promise<Jsep | null>;
  /** The simulcast layer of one received stream (its mid). */
  layer(mid: string, substream: 0 | 1 | 2): Promise<void>;
  leave(): Promise<void>;
}

/** One medium a subscription carries: its mid there, the feed it comes from (and that feed's display), audio or video. */
export interface SubscribedMedia {
  mid: string;
  feed: number;
  display: string;
  type: string;
}

const streamsOf = (data: Record<string, unknown>): SubscribedMedia[] =>
  Array.isArray(data.streams)
    ? (data.streams as { mid?: string; feed_id?: number; feed_display?: string; type?: string; active?: boolean }[])
        .filter((s) => s.active !== false && typeof s.mid === 'string' && typeof s.feed_id === 'number')
        .map((s) => ({ mid: s.mid!, feed: s.feed_id!, display: String(s.feed_display ?? ''), type: String(s.type ?? '') }))
    : [];

/** The publishers in the room now (a synchronous request on any VideoRoom handle). */
export async function listPublishers(handle: JanusHandle, ref: VideoRoomRef): Promise<Feed[]> {
  const answer = await handle.request({ request: 'listparticipants', room: ref.janusRoom });
  return feedsOf((answer.participants as { publisher?: boolean }[] | undefined)?.filter((p) => p.publisher));
}

/**
 * Joins the room as one subscriber receiving every given feed (Janus 1.x
 * multistream: one PeerConnection for all of them). `privateId` is the
 * participant's own publisher's, which ties the two together in the room.
 */
export async function joinAsSubscriber(session: JanusSession, ref: VideoRoomRef, feeds: number[], onEvent: (event: HandleEvent) => void): Promise<Subscriber> {
  const handle = await session.attach(VIDEOROOM, onEvent);
  try {
    const attached = await handle.message({ request: 'join', ptype: 'subscriber', room: ref.janusRoom, streams: feeds.map((feed) => ({ feed })) });
    if (!attached.jsep) throw new JanusError(0, 'the subscription came without an offer');
    const subscriber: Subscriber = {
      handle,
      offer: attached.jsep,
      streams: streamsOf(attached.data),
      async start(answer) {
        await handle.message({ request: 'start' }, answer);
      },
      async update(add, remove) {
        const updated = await handle.message({
          request: 'update',
          ...(add.length ? { subscribe: add.map((feed) => ({ feed })) } : {}),
          ...(remove.length ? { unsubscribe: remove.map((feed) => ({ feed })) } : {}),
        });
        subscriber.streams = streamsOf(updated.data).length ? streamsOf(updated.data) : subscriber.streams;
        return updated.jsep ?? null;
      },
      async layer(mid, substream) {
        await handle.message({ request: 'configure', streams: [{ mid, substream }] });
      },
      async leave() {
        await handle.message({ request: 'leave' }).catch(() => undefined);
        await handle.detach();
      },
    };
    return subscriber;
  } catch (error) {
    await handle.detach();
    throw error;
  }
}

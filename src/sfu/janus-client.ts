// A client of Janus's HTTP API (the "Janus API": sessions, handles, plugin
// messages, trickle), used only by Parley: browsers never reach it
// (docs/design.md, "Group calls through an SFU"). Every request carries the
// API secret. One session per instance and node; its events arrive over a
// long poll, which also keeps the session alive, with a keepalive every
// 250 ms beside it: a Janus that stops answering (hung, or frozen with
// SIGSTOP) holds its long poll open without a word, so only a request that
// goes unanswered tells (docs/design.md, "Group calls through an SFU",
// Faults).

/**
 * How long a request may take before the instance counts as not answering
 * (when nothing else was heard from it since the request went). A keepalive is
 * answered in a millisecond; 2 s was missed by a working Janus at a load
 * average of 50 (bench/README.md, "Issue 41: faults").
 */
export const REQUEST_TIMEOUT_MS = 2_500;
/** Janus answers a poll after 30 s at the latest (with a keepalive). */
const POLL_TIMEOUT_MS = 40_000;
/**
 * A keepalive this often, each without waiting for the last: a Janus that
 * stopped answering is noticed within KEEPALIVE_EVERY_MS + REQUEST_TIMEOUT_MS
 * (2.75 s; every second, it was 3.5 s).
 */
const KEEPALIVE_EVERY_MS = 250;

export class JanusError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(`Janus error ${code}: ${message}`);
    this.name = 'JanusError';
  }
}

/** The instance cannot be reached or stopped answering: its rooms must move (docs/design.md, "Group calls through an SFU"). */
export class JanusUnreachableError extends Error {
  constructor(readonly instance: string, cause: unknown) {
    super(`Janus at ${instance} does not answer: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'JanusUnreachableError';
  }
}

export interface Jsep {
  type: 'offer' | 'answer';
  sdp: string;
}

/** A plugin's message or event: its data, and a JSEP when one came with it. */
export interface PluginReply {
  data: Record<string, unknown>;
  jsep?: Jsep;
}

/** What Janus says of a handle without being asked: plugin events, webrtcup, media, hangup, slowlink, detached. */
export interface HandleEvent {
  janus: string;
  data?: Record<string, unknown>;
  jsep?: Jsep;
  [key: string]: unknown;
}

export interface JanusHandle {
  readonly id: number;
  /** A synchronous plugin request (create, destroy, exists, kick, listparticipants): its answer. */
  request(body: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** An asynchronous plugin request (join, publish, configure, start): the event that answers it. */
  message(body: Record<string, unknown>, jsep?: Jsep): Promise<PluginReply>;
  /** One ICE candidate of the browser, or null once it has gathered them all. */
  trickle(candidate: Record<string, unknown> | null): Promise<void>;
  detach(): Promise<void>;
}

export interface JanusSession {
  readonly instance: string;
  readonly id: number;
  /** True until the session is destroyed or found gone (the instance died, or it expired). */
  readonly alive: boolean;
  attach(plugin: string, onEvent?: (event: HandleEvent) => void): Promise<JanusHandle>;
  /** Called once when the session is found gone; not on destroy(). */
  onGone(listener: (error: Error) => void): void;
  destroy(): Promise<void>;
}

type Answer = Record<string, unknown> & { janus: string; transaction?: string; sender?: number };

let counter = 0;
const transaction = () => `parley-${process.pid}-${++counter}`;

async function post(url: string, body: Record<string, unknown>, instance: string): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  } catch (error) {
    throw new JanusUnreachableError(instance, error);
  }
  const answer = (await response.json()) as Answer;
  if (answer.janus === 'error') {
    const error = answer.error as { code: number; reason: string };
    throw new JanusError(error.code, error.reason);
  }
  return answer;
}

/** A plugin's own error (VideoRoom: `error_code` and `error` in its data). */
function pluginData(answer: Answer): Record<string, unknown> {
  const data = ((answer.plugindata as { data?: Record<string, unknown> } | undefined)?.data ?? {}) as Record<string, unknown>;
  if (typeof data.error_code === 'number') throw new JanusError(data.error_code, String(data.error ?? 'plugin error'));
  return data;
}

/** Opens a session on the instance at `instance` (its API URL, e.g. http://127.0.0.1:8088/janus). */
export async function openJanusSession(instance: string, apiSecret: string | null): Promise<JanusSession> {
  const secret: Record<string, string> = apiSecret ? { apisecret: apiSecret } : {};
  const created = await post(instance, { janus: 'create', transaction: transaction(), ...secret }, instance);
  const id = (created.data as { id: number }).id;
  const sessionUrl = `${instance}/${id}`;
  const pending = new Map<string, { resolve(answer: Answer): void; reject(error: Error): void }>();
  const handles = new Map<number, (event: HandleEvent) => void>();
  const goneListeners: ((error: Error) => void)[] = [];
  let alive = true;
  /** When Janus last answered anything on this session (a request, the poll). */
  let heardAt = Date.now();

  const gone = (error: Error) => {
    if (!alive) return;
    alive = false;
    clearInterval(keepalive);
    for (const waiting of pending.values()) waiting.reject(error);
    pending.clear();
    for (const listener of goneListeners) listener(error);
  };

  const deliver = (event: Answer) => {
    const waiting = event.transaction ? pending.get(event.transaction) : undefined;
    // An asynchronous request is answered first by `ack`, then by the event with its transaction.
    if (waiting && event.janus === 'event') {
      pending.delete(event.transaction!);
      waiting.resolve(event);
      return;
    }
    if (event.janus === 'keepalive' || event.janus === 'ack') return;
    const listener = event.sender !== undefined ? handles.get(event.sender) : undefined;
    if (event.janus === 'event') listener?.({ ...event, janus: 'event', data: (event.plugindata as { data?: Record<string, unknown> } | undefined)?.data ?? {} });
    else listener?.(event as HandleEvent);
  };

  const poll = async () => {
    const query = new URLSearchParams({ maxev: '10', rid: String(Date.now()), ...secret });
    while (alive) {
      try {
        const response = await fetch(`${sessionUrl}?${query}`, { signal: AbortSignal.timeout(POLL_TIMEOUT_MS) });
        const answer = (await response.json()) as Answer | Answer[];
        heardAt = Date.now();
        const events = Array.isArray(answer) ? answer : [answer];
        for (const event of events) {
          if (event.janus === 'error') return gone(new JanusError((event.error as { code: number }).code, String((event.error as { reason: string }).reason)));
          deliver(event);
        }
      } catch (error) {
        return gone(new JanusUnreachableError(instance, error));
      }
    }
  };

  const send = async (url: string, body: Record<string, unknown>) => {
    const sentAt = Date.now();
    try {
      const answer = await post(url, { ...body, transaction: body.transaction ?? transaction(), ...secret }, instance);
      heardAt = Date.now();
      return answer;
    } catch (error) {
      // A session Janus no longer knows (458), or an instance that answered nothing since this request went: the
      // session is gone. One slow request while Janus answered others is that request's failure only.
      const unanswered = error instanceof JanusUnreachableError && heardAt < sentAt;
      if (unanswered || (error instanceof JanusError && error.code === 458)) gone(error);
      throw error;
    }
  };

  const keepalive = setInterval(() => void send(sessionUrl, { janus: 'keepalive' }).catch(() => undefined), KEEPALIVE_EVERY_MS);
  keepalive.unref();
  void poll();

  return {
    instance,
    id,
    get alive() {
      return alive;
    },
    onGone(listener) {
      goneListeners.push(listener);
    },
    async attach(plugin, onEvent) {
      const attached = await send(sessionUrl, { janus: 'attach', plugin });
      const handleId = (attached.data as { id: number }).id;
      const handleUrl = `${sessionUrl}/${handleId}`;
      if (onEvent) handles.set(handleId, onEvent);
      return {
        id: handleId,
        async request(body) {
          return pluginData(await send(handleUrl, { janus: 'message', body }));
        },
        async message(body, jsep) {
          const tx = transaction();
          const answered = new Promise<Answer>((resolve, reject) => pending.set(tx, { resolve, reject }));
          // The session found gone while the request is still being sent rejects this before it is awaited
          // (the send's own error is the one thrown): not an unhandled rejection, which would end the process.
          answered.catch(() => undefined);
          try {
            await send(handleUrl, { janus: 'message', transaction: tx, body, ...(jsep ? { jsep } : {}) });
          } catch (error) {
            pending.delete(tx);
            throw error;
          }
          const event = await answered;
          return { data: pluginData(event), ...(event.jsep ? { jsep: event.jsep as Jsep } : {}) };
        },
        async trickle(candidate) {
          await send(handleUrl, { janus: 'trickle', candidate: candidate ?? { completed: true } });
        },
        async detach() {
          handles.delete(handleId);
          if (alive) await send(handleUrl, { janus: 'detach' }).catch(() => undefined);
        },
      };
    },
    async destroy() {
      if (!alive) return;
      alive = false;
      clearInterval(keepalive);
      await post(sessionUrl, { janus: 'destroy', transaction: transaction(), ...secret }, instance).catch(() => undefined);
    },
  };
}

/** Whether an instance answers `info` (readiness of a Janus that Parley started, and the admin view). */
export async function janusAnswers(instance: string, timeoutMs = 1000): Promise<boolean> {
  try {
    const response = await fetch(`${instance}/info`, { signal: AbortSignal.timeout(timeoutMs) });
    return response.ok && ((await response.json()) as { janus?: string }).janus === 'server_info';
  } catch {
    return false;
  }
}

// What the call is, as this page knows it, in one place: its phase (before
// Join, joining, waiting to be let in, in the call, over and why), who this
// participant is, who else is in the call and, for a host, who waits to be
// let in, the room's settings, this page's own connection, microphone and
// camera, and the rating given afterwards. The call page's controllers
// (in-call.ts and in-call/) write it as the server and the person act;
// whatever shows or reports the call subscribes to its changes, each a small
// typed record, told in the order they happened.
import type { PeerInfo, RoomSettings } from '../../../src/shared/protocol.js';
import type { RecordingState } from '../../../src/shared/recording-protocol.js';
import type { EndKind as ConnectionEnd } from './reconnection.js';

export type CallPhase = 'ready' | 'joining' | 'waiting' | 'in-call' | 'ended';
/** Why the call (or the wait) ended for this participant: its own leave, or what the connection was told. */
export type EndKind = 'left' | ConnectionEnd;
/** This page's own connection to the call: `reconnecting` while the banner says so (connection-health.ts). */
export type ConnectionStatus = 'connecting' | 'connected' | 'reconnecting';
export type Rating = 'good' | 'neutral' | 'bad';

export interface CallSnapshot {
  phase: CallPhase;
  /** Set as the phase becomes `ended`. */
  end: EndKind | null;
  /** `id` is the server's, once it answered the join; name and role as the server confirmed them. */
  self: { id: string | null; name: string; role: PeerInfo['role'] };
  settings: RoomSettings;
  /** The others in the call, by peer id. */
  participants: ReadonlyMap<string, PeerInfo>;
  /** For a host: who waits to be let in, by peer id, oldest first. */
  knocking: ReadonlyMap<string, PeerInfo>;
  connection: ConnectionStatus;
  /** Whether the participant has a microphone (camera) at all, and whether it is on. */
  hasMicrophone: boolean;
  hasCamera: boolean;
  microphone: boolean;
  camera: boolean;
  /** The rating given after the call, once the server took it. */
  rating: Rating | null;
  /** The room's recording (docs/design.md, "Recording with consent"): allowed, idle, asking or recording, and whose media is recorded. */
  recording: Omit<RecordingState, 'type'>;
}

export type CallChange =
  | { type: 'phase'; phase: CallPhase }
  | { type: 'settings'; settings: RoomSettings }
  | { type: 'participant-joined' | 'participant-left' | 'knock-ended'; peer: PeerInfo }
  /** For a host: these people started waiting (several at once when the host comes in). */
  | { type: 'knock'; peers: PeerInfo[] }
  | { type: 'connection'; status: ConnectionStatus }
  | { type: 'microphone' | 'camera'; on: boolean }
  | { type: 'feedback'; rating: Rating }
  | { type: 'recording'; recording: CallSnapshot['recording'] };

export type CallListener = (change: CallChange, now: Readonly<CallSnapshot>) => void;

export type CallState = ReturnType<typeof createCallState>;

export function createCallState(initial: { name: string; role: PeerInfo['role']; settings: RoomSettings }) {
  const participants = new Map<string, PeerInfo>();
  const knocking = new Map<string, PeerInfo>();
  const now: CallSnapshot = {
    phase: 'ready',
    end: null,
    self: { id: null, name: initial.name, role: initial.role },
    settings: initial.settings,
    participants,
    knocking,
    connection: 'connecting',
    // Until Join says otherwise, as most people have both (the control bar is laid out ahead for them).
    hasMicrophone: true,
    hasCamera: true,
    microphone: true,
    camera: true,
    rating: null,
    recording: { enabled: false, state: 'idle', recorded: [] },
  };
  const listeners = new Set<CallListener>();

  function emit(change: CallChange) {
    for (const listener of [...listeners]) {
      try {
        listener(change, now);
      } catch (error) {
        // One subscriber's fault must not stop the call, nor keep the others from hearing of it.
        reportError(error);
      }
    }
  }
  /** Once the call is over only its end and the rating are news: its teardown is not. */
  const over = () => now.phase === 'ended';

  /** Sets a field, telling the subscribers `change` if it changed. */
  function set<K extends 'phase' | 'settings' | 'connection' | 'microphone' | 'camera' | 'rating'>(key: K, value: CallSnapshot[K], change: CallChange) {
    if (now[key] === value || (over() && key !== 'rating')) return;
    now[key] = value;
    emit(change);
  }
  const setPhase = (phase: CallPhase) => set('phase', phase, { type: 'phase', phase });
  const setConnection = (status: ConnectionStatus) => set('connection', status, { type: 'connection', status });
  /** The room's settings, told when one of them differs (the server sends them whole, on every join). */
  function setSettings(settings: RoomSettings) {
    const changed = (Object.keys(settings) as (keyof RoomSettings)[]).some((key) => settings[key] !== now.settings[key]);
    if (changed) set('settings', settings, { type: 'settings', settings });
  }

  /** The server answered the join: who this participant is, and where they are now. */
  function answered(self: PeerInfo, phase: 'waiting' | 'in-call') {
    now.self = { id: self.id, name: self.name, role: self.role };
    setPhase(phase);
    if (now.connection === 'connecting') setConnection('connected');
  }

  /** Adds to `list` those of `peers` it lacks, and returns them. */
  function add(list: Map<string, PeerInfo>, peers: PeerInfo[]): PeerInfo[] {
    const fresh = over() ? [] : peers.filter((peer) => !list.has(peer.id));
    for (const peer of fresh) list.set(peer.id, peer);
    return fresh;
  }

  function remove(list: Map<string, PeerInfo>, peerId: string, type: 'participant-left' | 'knock-ended') {
    const peer = list.get(peerId);
    if (!peer || over()) return;
    list.delete(peerId);
    emit({ type, peer });
  }

  /** Removes from `list` everyone not among `peers`. */
  function keepOnly(list: Map<string, PeerInfo>, peers: PeerInfo[], type: 'participant-left' | 'knock-ended') {
    const ids = new Set(peers.map((peer) => peer.id));
    for (const id of [...list.keys()]) if (!ids.has(id)) remove(list, id, type);
  }

  const participantJoined = (peers: PeerInfo[]) => {
    for (const peer of add(participants, peers)) emit({ type: 'participant-joined', peer });
  };
  const knocked = (peers: PeerInfo[]) => {
    const fresh = add(knocking, peers);
    if (fresh.length) emit({ type: 'knock', peers: fresh });
  };

  return {
    now: now as Readonly<CallSnapshot>,
    /** Calls `listener` with every change from now on; returns what stops it. */
    subscribe(listener: CallListener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },

    /** Join was clicked with this name and these tracks (on, as the join screen had them). */
    joining(name: string, media: MediaStream) {
      now.self = { ...now.self, name };
      now.hasMicrophone = now.microphone = media.getAudioTracks().length > 0;
      now.hasCamera = now.camera = media.getVideoTracks().length > 0;
      setPhase('joining');
    },
    waiting: (self: PeerInfo) => answered(self, 'waiting'),
    /** In the call, first or again: the room as it is now, and exactly these others in it. */
    joined(entry: { self: PeerInfo; settings: RoomSettings; peers: PeerInfo[] }) {
      setSettings(entry.settings);
      answered(entry.self, 'in-call');
      keepOnly(participants, entry.peers, 'participant-left');
      participantJoined(entry.peers);
    },
    setSettings,
    participantJoined: (peer: PeerInfo) => participantJoined([peer]),
    participantLeft: (peerId: string) => remove(participants, peerId, 'participant-left'),
    /** The host's list of who waits, whole, as the server gave it on (re)joining. */
    setKnocking(peers: PeerInfo[]) {
      keepOnly(knocking, peers, 'knock-ended');
      knocked(peers);
    },
    knocked,
    knockEnded: (peerId: string) => remove(knocking, peerId, 'knock-ended'),
    /** The banner's state: this page's own connection is being re-established (true), or is fine. */
    setReconnecting(on: boolean) {
      setConnection(on ? 'reconnecting' : now.phase === 'waiting' || now.phase === 'in-call' ? 'connected' : 'connecting');
    },
    /** Turns the microphone on or off (one that is not there stays off). */
    setMicrophone: (on: boolean) => set('microphone', on && now.hasMicrophone, { type: 'microphone', on }),
    setCamera: (on: boolean) => set('camera', on && now.hasCamera, { type: 'camera', on }),
    ended(kind: EndKind) {
      if (over()) return;
      now.end = kind;
      setPhase('ended');
    },
    /** The room's recording as the server says it is now. */
    setRecording(recording: CallSnapshot['recording']) {
      const was = now.recording;
      if (over() || (was.enabled === recording.enabled && was.state === recording.state && was.recorded.join() === recording.recorded.join())) return;
      now.recording = { enabled: recording.enabled, state: recording.state, recorded: [...recording.recorded] };
      emit({ type: 'recording', recording: now.recording });
    },
    /** The server took this participant's rating of the call. */
    feedbackGiven: (rating: Rating) => set('rating', rating, { type: 'feedback', rating }),
  };
}

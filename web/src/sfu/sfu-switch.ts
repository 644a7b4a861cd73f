// Moving a call between its two media paths (docs/design.md, "Group calls
// through an SFU"): the mesh (../mesh.ts) below the server's threshold, the
// SFU (sfu-call.ts) from it. With SFU_WARM, one below the threshold the SFU
// path is warm: published and subscribed, sending nothing (Jitsi keeps its
// bridge connection under a peer-to-peer call the same way), so that the third
// person's arrival only switches the cameras on there. Going up, the page
// sends on its SFU path (starting it, if it was not warm) once its
// peer-to-peer connections carry pictures (path-moves.ts: the newcomer's
// first pictures come that way), and keeps each peer-to-peer connection
// until that peer's media comes through the SFU (make-before-break,
// handover.ts); the newcomer who brings the room to the threshold calls the
// others peer to peer too, as they are still on the mesh. While it is up, the
// peer-to-peer signals of peers not yet moved are taken, the others' not,
// except an offer once the room is below the threshold (someone went back
// first: this page follows at once). Going down, the SFU path goes back to
// warm (or stops, further below) and the mesh calls again, one side per pair
// (Mesh.present: the smaller peer id calls).
import type { ServerMessage } from '../../../src/shared/protocol.js';
import type { Mesh } from '../mesh.js';
import type { Signaling } from '../signaling.js';
import type { Joined } from '../in-call/reconnection.js';
import { createHandover, MOVED_TO_SFU } from './handover.js';
import { createPathChoice, type PathChoice } from './path-choice.js';
import { createPathMoves } from './path-moves.js';
import { createSfuCall } from './sfu-call.js';

export interface SfuSwitchOptions {
  mesh: Mesh;
  signaling: Pick<Signaling, 'send' | 'request'>;
  stream(): MediaStream | null;
  onTrack(peerId: string, track: MediaStreamTrack, from: MediaStream, kind: 'camera' | 'screen'): void;
  /** The other participants in the call now. */
  others(): string[];
}

export type SfuSwitch = ReturnType<typeof createSfuSwitch>;

/** The SFU path, and the handover to it of the peers on the mesh when it goes up. */
function sfuPath(options: SfuSwitchOptions, rtcConfig: () => RTCConfiguration) {
  const call = createSfuCall({
    signaling: options.signaling,
    rtcConfig,
    stream: options.stream,
    onTrack: (peerId, track, from, kind) => {
      // Warm, nothing comes; a peer's camera waits in its stream while its tile shows its peer-to-peer media.
      if (!call.sending || (kind === 'camera' && handover.onMesh(peerId))) return;
      options.onTrack(peerId, track, from, kind);
    },
  });
  const handover = createHandover({
    arriving: async (peerId) => call.camera(peerId) !== null && (await call.receiving(peerId)),
    show: (peerId) => {
      const stream = call.camera(peerId);
      if (stream && options.others().includes(peerId)) for (const track of stream.getTracks()) options.onTrack(peerId, track, stream, 'camera');
    },
    tell: (peerId) => options.signaling.send({ type: 'signal', to: peerId, data: { description: { type: MOVED_TO_SFU } } }),
    close: (peerId) => options.mesh.remove(peerId),
  });
  return { call, handover };
}

export function createSfuSwitch(options: SfuSwitchOptions) {
  const { mesh } = options;
  let rtcConfig: RTCConfiguration = {};
  let choice: PathChoice | null = null;
  /** The server's threshold (joined.sfu), 0 without an SFU, and whether one below it the SFU path is kept warm. */
  let minParticipants = 0;
  let warmBelow = false;
  /** The people in the call as last counted, this page included (the call state may list them later than `joined`). */
  let people = 1;
  /** The call is recorded: through the SFU whatever the number of people (path-choice.ts). */
  let recorded = false;
  /** The peers a newcomer at the threshold calls peer to peer while its SFU path comes up (entered). */
  let arriving: string[] | null = null;
  /** In entered(): a page going up there without `arriving` goes straight to the SFU, with no peer-to-peer connection to wait for. */
  let entering = false;
  const { call, handover } = sfuPath(options, () => rtcConfig);

  const moves = createPathMoves({
    call,
    handover,
    mesh,
    others: options.others,
    path: () => choice?.path ?? null,
    warmWanted: () => warmBelow && choice?.path === 'mesh' && people === minParticipants - 1,
  });

  return {
    /**
     * In the call (first or again): whether this page calls nobody peer to peer, as the call goes through the SFU.
     * The newcomer who brings the room to the threshold does call the others, who were still on the mesh; its
     * SFU path sends once those connections carry pictures (path-moves.ts), and each
     * peer's media moves to it when it comes (handover.ts). Someone who
     * does not know yet that the call is recorded (told after `joined`) may call peers who are on the SFU
     * already: they do not answer, and its own handover closes those connections.
     */
    entered(joined: Joined): boolean {
      rtcConfig = { iceServers: joined.iceServers as RTCIceServer[], iceTransportPolicy: joined.iceTransportPolicy };
      if (!joined.sfu) return false;
      ({ minParticipants, warm: warmBelow } = joined.sfu);
      choice ??= createPathChoice(joined.sfu.minParticipants, (path) => (path === 'sfu' ? moves.up(arriving, entering && !arriving) : moves.down()));
      const atThreshold = !joined.resumed && !recorded && choice.path === 'mesh' && joined.peers.length + 1 === joined.sfu.minParticipants;
      arriving = atThreshold ? joined.peers.map((peer) => peer.id) : null;
      entering = true;
      if (recorded) choice.recording(true);
      // Back after a drop: the server let our publication and subscription go with the old connection.
      if (joined.resumed && call.active) void call.handle({ type: 'sfu-restart' }).catch(() => call.stop());
      people = 1 + joined.peers.length;
      choice.count(people);
      arriving = null;
      entering = false;
      moves.settle();
      return choice.path === 'sfu' && !atThreshold;
    },

    /** True when the message was the SFU path's to take (or a peer-to-peer signal it holds back). */
    handle(message: ServerMessage): boolean {
      if (message.type === 'sfu-offer' || message.type === 'sfu-restart') {
        void call.handle(message).catch(() => {});
        return true;
      }
      if (message.type !== 'signal') return false;
      if ('description' in message.data && message.data.description.type === MOVED_TO_SFU) {
        handover.told(message.from);
        return true;
      }
      if (choice?.path !== 'sfu' || handover.open(message.from)) return false;
      if ('description' in message.data && message.data.description.type === 'offer') choice.downNow();
      return choice.path === 'sfu';
    },

    /** The call is recorded (true) or no longer (docs/design.md, "Recording with consent"). */
    recording(on: boolean): void {
      recorded = on;
      choice?.recording(on);
    },

    /** Someone came or went: the path follows the number of people. */
    counted(): void {
      people = 1 + options.others().length;
      choice?.count(people);
      moves.settle();
    },

    get path() {
      return choice?.path ?? 'mesh';
    },

    /** Whether the peer's tile shows what comes peer to peer: that connection's tracks and states count. */
    meshShown(peerId: string): boolean {
      return (choice?.path ?? 'mesh') === 'mesh' || handover.onMesh(peerId);
    },

    /**
     * What this page sends besides its camera (a screen): the mesh gets its
     * tracks whatever the path (its connections, made again going down, send
     * them), the SFU a second publication.
     */
    outgoing: {
      addTracks(stream: MediaStream): void {
        mesh.addTracks(stream);
        call.share(stream);
      },
      removeTracks(stream: MediaStream): void {
        mesh.removeTracks(stream);
        call.share(null);
      },
      /** A camera or microphone switched: on both paths (the SFU publishes the stream the mesh sends, so the mesh's list is kept too). */
      async replaceTrack(previous: MediaStreamTrack, next: MediaStreamTrack): Promise<void> {
        await Promise.all([mesh.replaceTrack(previous, next), call.replaceTrack(previous, next)]);
      },
    },

    /** The stream a peer's screen arrives in on the path in use (`screenshare-started` names the sender's own). */
    screenStream(peerId: string, streamId: string): string {
      return call.sending ? call.screenStreamId(peerId) : streamId;
    },
    connections: call.connections,
    /**
     * The connections the call's media takes now, which the network summary is computed from
     * (docs/design.md, "Participant sessions"): the peer connections, and the SFU path's
     * publications (upstream) and subscription (downstream) while it carries the call (both during the handover).
     */
    measured(): RTCPeerConnection[] {
      const direct = mesh.byPeer().map(([, pc]) => pc);
      return call.sending ? [...call.connections(), ...direct] : direct;
    },

    /**
     * The connection each other participant's media arrives on: its own peer
     * connection in the mesh, the one subscription through the SFU (so the
     * quality bars and the media watch read the path to the SFU for everyone), except for
     * a peer whose tile still shows its peer-to-peer media during the handover.
     */
    byPeer(): [string, RTCPeerConnection][] {
      const subscription = call.sending ? call.subscription() : null;
      if (!subscription) return mesh.byPeer();
      const direct = new Map(mesh.byPeer());
      return options.others().map((id): [string, RTCPeerConnection] => [id, (handover.onMesh(id) && direct.get(id)) || subscription]);
    },

    close(): void {
      moves.stop();
      choice?.stop();
      handover.end();
      call.stop();
    },
  };
}

// Moving a call between its two media paths (docs/design.md, "Group calls
// through an SFU"): the mesh (../mesh.ts) below the server's threshold, the
// SFU (sfu-call.ts) from it. Going up, the page starts its publication and
// subscription and closes its peer-to-peer connections, which the others
// close too as they count the same people; while it is up, the others'
// peer-to-peer signals are not taken, except an offer once the room is below
// the threshold (someone went back first: this page follows at once). Going
// down, the SFU path stops and the mesh calls again, one side per pair
// (Mesh.present: the smaller peer id calls).
import type { ServerMessage } from '../../../src/shared/protocol.js';
import type { Mesh } from '../mesh.js';
import type { Signaling } from '../signaling.js';
import type { Joined } from '../in-call/reconnection.js';
import { createPathChoice, type PathChoice } from './path-choice.js';
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

export function createSfuSwitch(options: SfuSwitchOptions) {
  const { mesh } = options;
  let rtcConfig: RTCConfiguration = {};
  let choice: PathChoice | null = null;
  /** The call is recorded: through the SFU whatever the number of people (path-choice.ts). */
  let recorded = false;
  const call = createSfuCall({ signaling: options.signaling, rtcConfig: () => rtcConfig, stream: options.stream, onTrack: options.onTrack });

  const up = () => {
    for (const [id] of mesh.byPeer()) mesh.remove(id);
    call.start().catch(() => {
      // Janus refused or could not be reached: the next change of people tries again.
      call.stop();
    });
  };
  const down = () => {
    call.stop();
    for (const id of options.others()) mesh.present(id);
  };

  return {
    /** In the call (first or again): whether it goes through the SFU, in which case the newcomer calls nobody peer to peer. */
    entered(joined: Joined): boolean {
      rtcConfig = { iceServers: joined.iceServers as RTCIceServer[], iceTransportPolicy: joined.iceTransportPolicy };
      if (!joined.sfu) return false;
      choice ??= createPathChoice(joined.sfu.minParticipants, (path) => (path === 'sfu' ? up() : down()));
      if (recorded) choice.recording(true);
      // Back after a drop: the server let our publication and subscription go with the old connection.
      if (joined.resumed && call.active) void call.handle({ type: 'sfu-restart' }).catch(() => call.stop());
      choice.count(1 + joined.peers.length);
      return choice.path === 'sfu';
    },

    /** True when the message was the SFU path's to take (or a peer-to-peer signal it holds back). */
    handle(message: ServerMessage): boolean {
      if (message.type === 'sfu-offer' || message.type === 'sfu-restart') {
        void call.handle(message).catch(() => {});
        return true;
      }
      if (message.type !== 'signal' || choice?.path !== 'sfu') return false;
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
      choice?.count(1 + options.others().length);
    },

    get path() {
      return choice?.path ?? 'mesh';
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
      return call.active ? call.screenStreamId(peerId) : streamId;
    },
    connections: call.connections,
    /**
     * The connections the call's media takes now, which the network summary is computed from
     * (docs/design.md, "Participant sessions"): the peer connections, or the SFU path's
     * publications (upstream) and subscription (downstream).
     */
    measured(): RTCPeerConnection[] {
      return call.active ? call.connections() : mesh.byPeer().map(([, pc]) => pc);
    },

    /**
     * The connection each other participant's media arrives on: its own peer
     * connection in the mesh, the one subscription through the SFU (so the
     * quality bars and the media watch read the path to the SFU for everyone).
     */
    byPeer(): [string, RTCPeerConnection][] {
      const subscription = call.active ? call.subscription() : null;
      return subscription ? options.others().map((id): [string, RTCPeerConnection] => [id, subscription]) : mesh.byPeer();
    },

    close(): void {
      choice?.stop();
      call.stop();
    },
  };
}

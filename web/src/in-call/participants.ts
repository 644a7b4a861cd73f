// The other participants: their tiles (remote-peers.ts) and the peer
// connections to them (../mesh.ts), kept in step with the call state's list
// of who is in the call. The newcomer calls everyone already there; the
// server's news of others (joined, back, present, gone) and the signals they
// send come in through handle().
import type { PeerInfo, ServerMessage } from '../../../src/shared/protocol.js';
import { t } from '../i18n.js';
import { Mesh } from '../mesh.js';
import type { Signaling } from '../signaling.js';
import type { CallState } from './call-state.js';
import type { HostControls } from './host-controls.js';
import type { Joined } from './reconnection.js';
import { createRemotePeers } from './remote-peers.js';
import { createSfuSwitch } from '../sfu/sfu-switch.js';
import type { Stage } from './stage.js';

export interface ParticipantsOptions {
  state: CallState;
  stage: Pick<Stage, 'addTile'>;
  host: Pick<HostControls, 'canRemove' | 'remove'>;
  signaling: Pick<Signaling, 'send' | 'request'>;
  /** The camera and microphone, which the SFU path publishes (the mesh gets them through addTracks). */
  stream?: MediaStream;
  /** A peer connection's state changed (connection-monitor.ts). */
  onConnectionState(peerId: string, state: RTCPeerConnectionState): void;
  /** A peer we knew came back after its own drop and its connection to us is up: its media flows. */
  onFlowing(peerId: string): void;
  /** Whether media arrives on this connection now (media-watch.ts). */
  flowing(pc: RTCPeerConnection): boolean;
  /** Tells the others our microphone and camera state again. */
  announceMedia(): void;
  /** Announces a screen being shared again, for someone who missed it. */
  announceScreen(): Promise<void>;
}

export type Participants = ReturnType<typeof createParticipants>;

export function createParticipants(options: ParticipantsOptions) {
  const { state } = options;
  const peers = createRemotePeers({
    addTile: options.stage.addTile,
    showsMeters: () => state.now.settings.audioIndicator,
    onRemove: (peerId) => mesh.remove(peerId),
    canRemove: options.host.canRemove,
    requestRemove: (info) => void options.host.remove(info, leave),
  });
  const mesh = new Mesh('', {}, {
    send: (to, data) => options.signaling.send({ type: 'signal', to, data }),
    onTrack: (peerId, track, from) => {
      // A peer moved to the SFU path shows what comes from there (sfu-switch.ts).
      if (!sfu.meshShown(peerId)) return;
      // Media can come before the news of who sends it.
      if (!peers.has(peerId)) arrive({ id: peerId, name: t('call.unknownParticipant'), role: 'guest' });
      peers.track(peerId, track, from);
    },
    onState: (peerId, connection) => sfu.meshShown(peerId) && options.onConnectionState(peerId, connection),
  });
  // From the server's threshold the call's media goes through the SFU (docs/design.md, "Group calls through an SFU").
  const sfu = createSfuSwitch({
    mesh,
    signaling: options.signaling,
    stream: () => options.stream ?? null,
    onTrack: (peerId, track, from, kind) => {
      if (!peers.has(peerId)) arrive({ id: peerId, name: t('call.unknownParticipant'), role: 'guest' });
      // A screen is told apart by its stream, which on this path is the SFU's, whatever the announcement named.
      if (kind === 'screen') peers.screen(peerId, from.id);
      peers.track(peerId, track, from);
    },
    others: () => [...state.now.participants.keys()],
  });
  const unsubscribe = state.subscribe((change, now) => {
    if (change.type === 'settings') peers.showMeters(now.settings.audioIndicator);
    // The SFU records, so a recorded call goes through it, a call of two too.
    if (change.type === 'recording') sfu.recording(now.recording.state === 'recording');
  });

  /** Someone is in the call: a tile (which replaces any connection to them, so tile first), the state says so, the path follows the count. */
  function arrive(info: PeerInfo) {
    peers.add(info);
    state.participantJoined(info);
    sfu.counted();
  }

  function leave(peerId: string) {
    peers.remove(peerId);
    state.participantLeft(peerId);
    sfu.counted();
  }

  return {
    mesh,

    /**
     * Joined, first or again after a drop (the call state follows with the
     * server's list, CallState.joined). Returns the answers to the newcomer's
     * offers (Peer.answered).
     */
    enter(joined: Joined): Promise<void>[] {
      const rtcConfig: RTCConfiguration = { iceServers: joined.iceServers as RTCIceServer[], iceTransportPolicy: joined.iceTransportPolicy };
      let answers: Promise<void>[] = [];
      if (joined.resumed && mesh.selfId === joined.self.id) {
        // Back after a drop, as the same participant: keep the tiles and connections of those still here.
        peers.keepOnly(joined.peers.map((p) => p.id));
        for (const info of joined.peers) if (!peers.has(info.id)) peers.add(info);
        // Through the SFU: nobody is called peer to peer.
        if (!sfu.entered(joined)) mesh.resume(joined.peers.map((p) => p.id), rtcConfig, options.flowing);
      } else {
        peers.removeAll();
        mesh.reset(joined.self.id, rtcConfig);
        const viaSfu = sfu.entered(joined);
        // The newcomer calls everyone already there; they answer. (A tile added replaces its peer's connection: tile first.)
        // The first offer may have gone with the join already (offeredTo).
        answers = joined.peers.map((info) => {
          peers.add(info);
          return viaSfu ? Promise.resolve() : mesh.add(info.id, true, info.id === joined.offeredTo).answered;
        });
      }
      // Alone: the first to come calls this page, which answers.
      if (!joined.peers.length) mesh.readyToAnswer();
      return answers;
    },

    /** The server's news of the others, and what they send us through it. */
    async handle(message: ServerMessage): Promise<void> {
      if (sfu.handle(message)) return;
      switch (message.type) {
        case 'peer-joined':
          if (peers.has(message.peer.id)) {
            // Back after its own drop: it restarts the connection; what it missed is sent again.
            mesh.peerBack(message.peer.id);
            if (mesh.isConnected(message.peer.id)) options.onFlowing(message.peer.id);
          } else {
            arrive(message.peer);
          }
          // The newcomer missed the announcement of a share in progress.
          await options.announceScreen();
          return;
        case 'peer-reconnecting':
          peers.connectionLost(message.peerId, true);
          return;
        case 'peer-present':
          // Announced again after the server's nodes found each other again (Redis
          // was away): someone new gets a tile, and a connection that never
          // completed starts over (mesh.present decides which side calls). Through the
          // SFU nobody is called peer to peer: an offer there would take the other page
          // down to the mesh (sfu-switch.ts, handle), and Janus brings the media.
          if (mesh.isConnected(message.peer.id)) return;
          if (!peers.has(message.peer.id)) arrive(message.peer);
          if (sfu.meshShown(message.peer.id)) mesh.present(message.peer.id);
          // What they missed meanwhile: our microphone and camera state, a share in progress.
          options.announceMedia();
          await options.announceScreen();
          return;
        case 'peer-left':
          leave(message.peerId);
          return;
        case 'signal':
          return mesh.signal(message.from, message.data);
        case 'ice-servers':
          return mesh.renewIceServers(message.iceServers as RTCIceServer[]);
        case 'media-state':
          return peers.mediaState(message.from, message.audio, message.video);
        case 'screenshare-started':
        case 'screenshare-stopped':
          return peers.screen(message.from, message.type === 'screenshare-started' ? sfu.screenStream(message.from, message.streamId) : null);
      }
    },

    /** Plays everyone's sound through this output device (where the browser allows). */
    setSpeaker: peers.setSpeaker,
    /** The connection each other participant's media arrives on, on whichever path the call takes. */
    byPeer: () => sfu.byPeer(),
    /** The connections the call's media takes, on whichever path (the network summary's). */
    measured: () => sfu.measured(),
    /** What the page sends besides its camera (a screen), on whichever path the call takes. */
    outgoing: sfu.outgoing,
    /** The tiles, for what is said on them about each connection. */
    tiles: peers,

    close() {
      unsubscribe();
      sfu.close();
      mesh.close();
      peers.stopMeters();
    },
  };
}

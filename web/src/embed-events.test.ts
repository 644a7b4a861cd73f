// The call as the framing page hears of it, and what its commands do
// (docs/embedding.md, "Events", "Commands"): the real call state, a bridge
// that records what it would post.
import { describe, expect, it } from 'vitest';
import type { ParleyCommandMessage } from '../../src/client/embed.js';
import type { EmbedBridge } from './embed-bridge.js';
import { obeyParent, reportCallToParent, type EmbedActions } from './embed-events.js';
import { createCallState } from './in-call/call-state.js';

const settings = { chat: true, screenshare: true, invites: true, audioIndicator: true };
const media = { getAudioTracks: () => [{}], getVideoTracks: () => [{}] } as unknown as MediaStream;
const ada = { id: 'peer-ada', name: 'Dr. Ada', role: 'host' as const };
const pat = { id: 'peer-pat', name: 'Pat', role: 'guest' as const };
const sam = { id: 'peer-sam', name: 'Sam', role: 'guest' as const };

function recordingBridge() {
  const posted: { event: string; detail: unknown }[] = [];
  let handler: (command: ParleyCommandMessage) => void = () => {};
  const bridge: EmbedBridge = {
    active: true,
    emit: (event, detail) => void posted.push({ event, detail }),
    onCommand: (next) => {
      handler = next;
    },
  };
  return { bridge, posted, command: (message: ParleyCommandMessage) => handler(message) };
}

function recordingActions() {
  const done: string[] = [];
  const actions: EmbedActions = {
    setMicrophone: (on) => void done.push(`microphone ${on}`),
    setCamera: (on) => void done.push(`camera ${on}`),
    toggleChat: () => void done.push('chat'),
    leave: () => void done.push('leave'),
    decide: (peerId, decision) => void done.push(`${decision} ${peerId}`),
  };
  return { actions, done };
}

describe('reportCallToParent', () => {
  it("tells a host's call as the documented events, without a token or a peer id", () => {
    const state = createCallState({ name: 'Ada', role: 'host', settings });
    const { bridge, posted } = recordingBridge();
    reportCallToParent(state, bridge);
    state.joining('Ada', media);
    state.joined({ self: ada, settings, peers: [pat] });
    state.knocked([sam]);
    state.setReconnecting(true);
    state.setReconnecting(false);
    state.setMicrophone(false);
    state.setCamera(false);
    state.participantLeft(pat.id);
    state.ended('left');
    state.feedbackGiven('good');
    expect(posted).toEqual([
      { event: 'join', detail: { role: 'host', display_name: 'Dr. Ada' } },
      { event: 'participant_join', detail: { role: 'guest', display_name: 'Pat' } },
      { event: 'knock', detail: { display_name: 'Sam' } },
      { event: 'connection_status_change', detail: { status: 'reconnecting' } },
      { event: 'connection_status_change', detail: { status: 'connected' } },
      { event: 'microphone_toggle', detail: { enabled: false } },
      { event: 'camera_toggle', detail: { enabled: false } },
      { event: 'participant_leave', detail: { role: 'guest', display_name: 'Pat' } },
      { event: 'leave', detail: { reason: 'left' } },
      { event: 'feedback', detail: { rating: 'good' } },
    ]);
    expect(JSON.stringify(posted)).not.toMatch(/peer-/);
  });

  it('tells when the call is recorded, whether this participant is, and when it stops', () => {
    const state = createCallState({ name: 'Pat', role: 'guest', settings });
    const { bridge, posted } = recordingBridge();
    reportCallToParent(state, bridge);
    state.joining('Pat', media);
    state.joined({ self: pat, settings, peers: [ada] });
    posted.length = 0;
    state.setRecording({ enabled: true, state: 'asking', recorded: [] });
    state.setRecording({ enabled: true, state: 'recording', recorded: [ada.id] });
    state.setRecording({ enabled: true, state: 'recording', recorded: [ada.id, pat.id] });
    state.setRecording({ enabled: true, state: 'idle', recorded: [] });
    expect(posted).toEqual([
      { event: 'recording_started', detail: { recorded: false } },
      { event: 'recording_started', detail: { recorded: true } },
      { event: 'recording_stopped', detail: {} },
    ]);
  });

  it("tells a guest's wait, the admission, and each way out by its documented reason", () => {
    const reasons = (['left', 'removed', 'denied', 'closed', 'deleted', 'replaced', 'refused'] as const).map((end) => {
      const state = createCallState({ name: 'Pat', role: 'guest', settings });
      const { bridge, posted } = recordingBridge();
      reportCallToParent(state, bridge);
      state.joining('Pat', media);
      state.waiting(pat);
      state.joined({ self: pat, settings, peers: [ada] });
      state.ended(end);
      expect(posted.slice(0, 3).map((p) => p.event)).toEqual(['waiting', 'join', 'participant_join']);
      return (posted.at(-1)!.detail as { reason: string }).reason;
    });
    expect(reasons).toEqual(['left', 'removed', 'denied', 'closed', 'ended', 'ended', 'error']);
  });

  it('tells nothing through a bridge that is not active (not framed, or no origin allowed)', () => {
    const state = createCallState({ name: 'Pat', role: 'guest', settings });
    const { bridge, posted } = recordingBridge();
    reportCallToParent(state, { ...bridge, active: false });
    state.joining('Pat', media);
    state.joined({ self: pat, settings, peers: [] });
    expect(posted).toEqual([]);
  });
});

describe('obeyParent', () => {
  it('does nothing on the join screen, and after the call', () => {
    const state = createCallState({ name: 'Ada', role: 'host', settings });
    const { bridge, command } = recordingBridge();
    const { actions, done } = recordingActions();
    obeyParent(state, bridge, () => actions);
    command({ parley: 1, command: 'leave', detail: {} });
    command({ parley: 1, command: 'toggle_microphone', detail: {} });
    state.joining('Ada', media);
    state.joined({ self: ada, settings, peers: [] });
    state.ended('left');
    command({ parley: 1, command: 'leave', detail: {} });
    expect(done).toEqual([]);
  });

  it('sets or switches microphone and camera, opens the chat, leaves; a host admits the first or the one named', () => {
    const state = createCallState({ name: 'Ada', role: 'host', settings });
    const { bridge, command } = recordingBridge();
    const { actions, done } = recordingActions();
    obeyParent(state, bridge, () => actions);
    state.joining('Ada', media);
    state.joined({ self: ada, settings, peers: [] });
    state.knocked([pat, sam]);
    command({ parley: 1, command: 'toggle_microphone', detail: {} });
    command({ parley: 1, command: 'toggle_microphone', detail: { enabled: true } });
    command({ parley: 1, command: 'toggle_camera', detail: { enabled: false } });
    command({ parley: 1, command: 'toggle_chat', detail: {} });
    command({ parley: 1, command: 'admit', detail: { display_name: 'Sam' } });
    command({ parley: 1, command: 'deny', detail: {} });
    command({ parley: 1, command: 'admit', detail: { display_name: 'Nobody' } });
    command({ parley: 1, command: 'leave', detail: {} });
    expect(done).toEqual(['microphone false', 'microphone true', 'camera false', 'chat', 'admit peer-sam', 'deny peer-pat', 'leave']);
  });

  it('lets a guest decide nothing, and a guest who waits only leave or switch its media', () => {
    const state = createCallState({ name: 'Pat', role: 'guest', settings });
    const { bridge, command } = recordingBridge();
    const { actions, done } = recordingActions();
    obeyParent(state, bridge, () => actions);
    state.joining('Pat', media);
    state.waiting(pat);
    command({ parley: 1, command: 'toggle_chat', detail: {} });
    command({ parley: 1, command: 'admit', detail: {} });
    command({ parley: 1, command: 'toggle_camera', detail: {} });
    state.joined({ self: pat, settings, peers: [ada] });
    state.knocked([sam]);
    command({ parley: 1, command: 'deny', detail: {} });
    command({ parley: 1, command: 'leave', detail: {} });
    expect(done).toEqual(['camera false', 'leave']);
  });
});

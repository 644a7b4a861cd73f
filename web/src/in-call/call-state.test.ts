// The call state: what it tells its subscribers, and in what order, as the
// call goes from Join to the feedback (docs/call.md, "In the browser").
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCallState, type CallChange } from './call-state.js';

const settings = { chat: true, screenshare: true, invites: true, audioIndicator: true };
const both = { getAudioTracks: () => [{}], getVideoTracks: () => [{}] } as unknown as MediaStream;
const cameraOnly = { getAudioTracks: () => [], getVideoTracks: () => [{}] } as unknown as MediaStream;
const ada = { id: 'p-ada', name: 'Dr. Ada', role: 'host' as const };
const pat = { id: 'p-pat', name: 'Pat', role: 'guest' as const };
const sam = { id: 'p-sam', name: 'Sam', role: 'guest' as const };

function recorded(role: 'host' | 'guest' = 'host') {
  const state = createCallState({ name: 'Ada', role, settings });
  const changes: CallChange[] = [];
  state.subscribe((change) => void changes.push(change));
  return { state, changes, types: () => changes.map((c) => c.type) };
}

afterEach(() => vi.unstubAllGlobals());

describe('createCallState', () => {
  it('goes from Join into the call: the room as the server says, the phase, the connection, then who is there', () => {
    const { state, changes } = recorded();
    const noChat = { ...settings, chat: false };
    state.joining('Ada', both);
    state.joined({ self: ada, settings: noChat, peers: [pat] });
    expect(changes).toEqual([
      { type: 'phase', phase: 'joining' },
      { type: 'settings', settings: noChat },
      { type: 'phase', phase: 'in-call' },
      { type: 'connection', status: 'connected' },
      { type: 'participant-joined', peer: pat },
    ]);
    expect(state.now.self).toEqual({ id: 'p-ada', name: 'Dr. Ada', role: 'host' });
    expect([...state.now.participants.values()]).toEqual([pat]);
  });

  it('after a drop, joined again: only who left and who came are news (the same settings, sent again, are not)', () => {
    const { state, changes } = recorded();
    state.joining('Ada', both);
    state.joined({ self: ada, settings, peers: [pat] });
    state.setReconnecting(true);
    changes.length = 0;
    state.joined({ self: ada, settings: { ...settings }, peers: [sam] });
    state.setReconnecting(false);
    expect(changes).toEqual([
      { type: 'participant-left', peer: pat },
      { type: 'participant-joined', peer: sam },
      { type: 'connection', status: 'connected' },
    ]);
  });

  it('tells a guest’s wait and admission, and a host’s list of who waits (those before the host came at once)', () => {
    const guest = recorded('guest');
    guest.state.joining('Pat', both);
    guest.state.waiting(pat);
    guest.state.joined({ self: pat, settings, peers: [ada] });
    expect(guest.changes.filter((c) => c.type === 'phase')).toEqual([
      { type: 'phase', phase: 'joining' },
      { type: 'phase', phase: 'waiting' },
      { type: 'phase', phase: 'in-call' },
    ]);

    const host = recorded();
    host.state.setKnocking([pat, sam]);
    host.state.knocked([sam]);
    host.state.knockEnded(pat.id);
    host.state.setKnocking([]);
    expect(host.changes).toEqual([
      { type: 'knock', peers: [pat, sam] },
      { type: 'knock-ended', peer: pat },
      { type: 'knock-ended', peer: sam },
    ]);
  });

  it('turns the microphone and camera on and off, but never one that is not there', () => {
    const { state, changes } = recorded();
    state.joining('Ada', cameraOnly);
    changes.length = 0;
    state.setMicrophone(true);
    state.setCamera(false);
    state.setCamera(false);
    expect(changes).toEqual([{ type: 'camera', on: false }]);
    expect(state.now).toMatchObject({ hasMicrophone: false, microphone: false, hasCamera: true, camera: false });
  });

  it('ends once, with its reason; the teardown after it is no news, the rating is', () => {
    const { state, changes } = recorded();
    state.joining('Ada', both);
    state.joined({ self: ada, settings, peers: [pat] });
    changes.length = 0;
    state.ended('closed');
    state.ended('left');
    state.setReconnecting(false);
    state.participantLeft(pat.id);
    state.setMicrophone(false);
    state.feedbackGiven('good');
    expect(changes).toEqual([
      { type: 'phase', phase: 'ended' },
      { type: 'feedback', rating: 'good' },
    ]);
    expect(state.now).toMatchObject({ end: 'closed', rating: 'good' });
  });

  it('reports a subscriber that throws, and the others still hear of the change', () => {
    const reportError = vi.fn();
    vi.stubGlobal('reportError', reportError);
    const state = createCallState({ name: 'Ada', role: 'host', settings });
    state.subscribe(() => {
      throw new Error('a subscriber’s bug');
    });
    const heard: string[] = [];
    const stop = state.subscribe((change) => void heard.push(change.type));
    state.joining('Ada', both);
    stop();
    state.setMicrophone(false);
    expect(heard).toEqual(['phase']);
    expect(reportError).toHaveBeenCalledTimes(2);
  });
});

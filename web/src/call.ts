// Entry of the participant pages: the join screen, then the call, then the
// feedback; data for the page comes from the server in a JSON block.
import type { JoinPageData } from '../../src/http/routes/join.routes.js';
import './call.css';
import { h, show } from './dom.js';
import { showFeedback } from './feedback.js';
import { startCall } from './in-call.js';
import { rememberedName } from './in-call/reconnection.js';
import { showPrejoin } from './prejoin.js';
import { signalingUrl, warmSocket } from './signaling.js';

function message(root: Element, title: string, text: string, testId?: string, next?: string) {
  show(
    root,
    h(
      'section',
      { class: 'card message', ...(testId ? { 'data-testid': testId } : {}) },
      h('h1', { tabindex: -1 }, title),
      h('p', {}, text),
      next ? h('a', { href: next, class: 'button primary' }, 'Continue') : null,
    ),
  );
  root.querySelector('h1')?.focus();
}

async function main() {
  const root = document.getElementById('app')!;
  const data = JSON.parse(document.getElementById('parley-data')!.textContent!) as JoinPageData;
  const warm = warmSocket(signalingUrl());
  // After a reload mid-call, the name the person joined with.
  const displayName = rememberedName(data.joinToken) ?? data.displayName;
  const { name, media } = await showPrejoin(root, { roomName: data.roomName, displayName });
  startCall({
    root,
    joinToken: data.joinToken,
    roomName: data.roomName,
    name,
    stream: media.stream,
    socket: warm.take(),
    onEnd: ({ kind, joined, returnUrl, message: text, code }) => {
      if (kind === 'denied') {
        return message(root, 'You were not let in', 'The host did not let you into this call. If you think this is a mistake, contact whoever sent you the link.', 'waiting-denied');
      }
      if (kind === 'removed') return message(root, 'You were removed from the call', 'The host removed you from this call.', 'removed');
      // Left the waiting room before being let in: there was no call to rate.
      if (kind === 'left' && !joined) return message(root, 'You left the waiting room', 'You were not in the call.', undefined, returnUrl ?? undefined);
      if (kind === 'refused') {
        if (code === 'room-closed') return message(root, 'This room is closed', 'The call in this room is over and the room cannot be joined any more.', 'room-closed');
        return message(root, 'You could not join', text ?? 'Please try again later.');
      }
      if (kind === 'replaced') return message(root, 'The call continues in another window', 'You joined this call from another window or device.');
      const next = returnUrl ?? undefined;
      // Closed while waiting to be let in: there was no call to rate either.
      if (kind === 'closed' && !joined) return message(root, 'This room is closed', 'The call in this room is over.', 'room-closed', next);
      if (kind === 'deleted' || !joined || !returnUrl) return message(root, 'This room no longer exists', 'The organiser removed this room.', 'room-closed', next);
      showFeedback(root, {
        participantToken: joined.participantToken,
        returnUrl,
        ...(kind === 'closed' ? { notice: 'The organiser closed this room, so the call has ended.' } : {}),
      });
    },
  });
}

void main();

// Every text of the participant pages in English: the source catalogue.
// Its keys are the keys of every other language (catalogues/*.ts must have
// each one, and no other: the compiler checks). Shared with web/, which
// never bundles a catalogue: the server sends the one the page speaks.
import type { Message } from './catalogue.js';

export const en = {
  // Pages the server renders
  'page.notFound.title': 'This link is not valid',
  'page.notFound.text': 'Check that you opened the whole link you were sent, or ask for a new one.',
  'page.closed.title': 'This room is closed',
  'page.closed.text': 'The call in this room is over and the room cannot be joined any more.',
  'page.left.title': 'You have left the call',
  'page.left.text': 'Thank you. You can close this window now.',
  'page.unavailable.title': 'Not available',
  'page.unavailable.text': 'The call pages have not been built on this server.',
  'page.restarting.title': 'Briefly unavailable',
  'page.restarting.text': 'The video service is restarting. This page tries again by itself in a few seconds.',
  'page.noScript': 'This call needs JavaScript.',
  continue: 'Continue',

  // Join screen
  'join.cameraPreview': 'Your camera preview',
  'join.microphoneLevel': 'Your microphone level',
  'join.name': 'Your name',
  'join.nameMissing': 'Enter your name so that the others know who you are.',
  'join.camera': 'Camera',
  'join.microphone': 'Microphone',
  'join.noCamera': 'No camera',
  'join.noMicrophone': 'No microphone',
  'join.device': 'Device {number}',
  'join.join': 'Join',
  'join.joining': 'Joining…',

  // The check before joining
  'check.title': 'Check before you join',
  'check.speakerHint': 'Can you hear a short tune?',
  'check.speaker': 'Test speaker',
  'check.checking': 'Checking your connection…',
  'check.ready': 'Your connection is ready for the call.',
  'check.relay': 'Your network lets the call through only by way of our relay server. It will work, perhaps with lower quality.',
  'check.blocked': 'Your network blocks video calls. Try another network, for example your phone’s mobile data, or ask your IT department to allow video calls.',
  'check.offline': 'The service cannot be reached. Check your internet connection and reload the page.',

  // Camera and microphone problems
  'media.unsupported': 'This browser cannot use a camera or microphone here. You can still join and see and hear the others.',
  'media.blocked': 'Camera and microphone access was blocked. Allow it in your browser’s address bar and reload, or join without them: you will still see and hear the others.',
  'media.noCamera': 'No camera was found (or it is in use). You can join with your microphone only.',
  'media.noMicrophone': 'No microphone was found (or it is in use). You can join with your camera only.',
  'media.none': 'No camera or microphone was found. You can still join and see and hear the others.',

  // The call
  'call.self': '{name} (you)',
  'call.yourCamera': 'Your camera',
  'call.yourMicrophoneLevel': 'Your microphone level',
  'call.videoOf': 'Video of {name}',
  'call.microphoneLevelOf': 'Microphone level of {name}',
  'call.screenOf': 'Screen of {name}',
  'call.unknownParticipant': 'Participant',
  'call.muted': '{name} (muted)',
  'call.controls': 'Call controls',
  'call.mute': 'Mute',
  'call.unmute': 'Unmute',
  'call.cameraOff': 'Camera off',
  'call.cameraOn': 'Camera on',
  'call.shareScreen': 'Share screen',
  'call.stopSharing': 'Stop sharing',
  'call.invite': 'Invite',
  'call.leave': 'Leave',
  'call.screenNotPossible': 'Screen sharing is not possible now.',
  'call.screenCancelled': 'Screen sharing was cancelled or is not allowed.',
  'call.joinFailed': 'Could not join.',
  'call.joinDelayed': 'The service is briefly unavailable. Joining again in a moment…',
  'call.alone': 'Waiting for the others to join…',
  'call.switchCamera': 'Switch camera',
  'call.devices': 'Devices',
  'call.fullscreen': 'Full screen',
  'call.exitFullscreen': 'Exit full screen',
  'devices.title': 'Camera, microphone and speaker',
  'devices.speaker': 'Speaker',
  'devices.default': 'Default',

  // Chat
  'chat.title': 'Chat',
  'chat.messages': 'Chat messages',
  'chat.message': 'Message',
  'chat.send': 'Send',
  'chat.you': 'You',
  'chat.notSent': 'Not sent.',
  'chat.retry': 'Retry',
  'chat.unread': { one: '{count} unread message', other: '{count} unread messages' },

  // Invites
  'invite.link': 'Invite link (works once per person you send it to)',
  'invite.copy': 'Copy',
  'invite.copied': 'Invite link copied.',
  'invite.copyByHand': 'Select the link and copy it.',
  'invite.failed': 'Could not create an invite.',

  // Connections
  'connection.reconnecting': 'Connection lost. Reconnecting…',
  'connection.reconnected': 'Reconnected.',
  'connection.peerReconnecting': 'Connection lost. Waiting for {name} to reconnect…',
  'connection.peerPoor': 'Poor connection with {name}',
  // Video gives way to sound on every connection: weakLink when the thin link is known to be this
  // person's own (web/src/in-call/connection-health.ts), weakBetween when it may be at either end.
  'connection.weakLink': 'Your connection is weak: your video is reduced so that you can still be heard.',
  'connection.weakBetween': 'The connection between you is weak: your video is reduced so that you can still be heard.',
  'quality.unknown': 'Connection to {name}: measuring',
  'quality.lost': 'Connection to {name}: lost',
  'quality.good': 'Connection to {name}: good',
  'quality.fair': 'Connection to {name}: fair',
  'quality.poor': 'Connection to {name}: poor',
  'quality.roundTrip': 'round trip {ms} ms',
  'quality.loss': '{percent}% loss',

  // Waiting room and host controls
  'waiting.heading': 'Waiting for the host',
  'waiting.text': 'The host knows you are here and will let you in shortly. Please keep this page open.',
  'waiting.check': 'Meanwhile, check that others will see and hear you: your camera and microphone level are shown here.',
  'waiting.count': { one: '{count} person is waiting to join', other: '{count} people are waiting to join' },
  'waiting.title': 'Waiting to join',
  'waiting.someone': '{name} is waiting to join.',
  'waiting.admit': 'Admit',
  'waiting.deny': 'Deny',
  'waiting.admitName': 'Admit {name}',
  'waiting.denyName': 'Deny {name}',
  'waiting.admitted': '{name} was let in.',
  'waiting.denied': '{name} was not let in.',
  'host.remove': 'Remove',
  'host.removeName': 'Remove {name} from the call',
  'host.removed': '{name} was removed from the call.',

  // How the call ends
  'end.denied.title': 'You were not let in',
  'end.denied.text': 'The host did not let you into this call. If you think this is a mistake, contact whoever sent you the link.',
  'end.removed.title': 'You were removed from the call',
  'end.removed.text': 'The host removed you from this call.',
  'end.leftWaiting.title': 'You left the waiting room',
  'end.leftWaiting.text': 'You were not in the call.',
  'end.closedWhileWaiting.text': 'The call in this room is over.',
  'end.refused.title': 'You could not join',
  'end.refused.text': 'Please try again later.',
  'end.replaced.title': 'The call continues in another window',
  'end.replaced.text': 'You joined this call from another window or device.',
  'end.deleted.title': 'This room no longer exists',
  'end.deleted.text': 'The organiser removed this room.',
  'end.closedNotice': 'The organiser closed this room, so the call has ended.',

  // Feedback
  'feedback.title': 'How was your call?',
  'feedback.good': 'Good',
  'feedback.neutral': 'Neutral',
  'feedback.bad': 'Bad',
  'feedback.comment': 'Comment (optional)',
  'feedback.send': 'Send feedback',
  'feedback.skip': 'Skip',
  'feedback.chooseFirst': 'Choose Good, Neutral or Bad first, or skip.',
  'feedback.failed': 'Your feedback could not be sent. Try again, or skip.',
  'feedback.thanks': 'Thank you for your feedback.',

  // What the server refused (signaling error codes)
  'error.room-closed': 'This room is closed.',
  'error.room-full': 'The call is full.',
  'error.not-found': 'That person is no longer here.',
  'error.forbidden': 'Only the host can do that.',
  'error.rate-limited': 'Too many messages; wait a moment.',
  'error.chat-disabled': 'Chat is switched off for this room.',
  'error.screenshare-disabled': 'Screen sharing is switched off for this room.',
  'error.invites-disabled': 'Invites are switched off for this room.',
  'error.not-admitted': 'You are waiting for the host to let you in.',
  'error.unavailable': 'That did not work. Try again.',
  'error.other': 'Something went wrong. Try again.',
} as const satisfies Record<string, Message>;

export type MessageKey = keyof typeof en;
/** A language's catalogue: every key of the English one, and no other. */
export type Catalogue = { [K in MessageKey]: (typeof en)[K] extends string ? string : Message };

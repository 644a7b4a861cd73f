// Every text the call shows, in one place: the translations to come replace
// this file's values, not strings scattered through the call's modules.
export const text = {
  self: (name: string) => `${name} (you)`,
  yourCamera: 'Your camera',
  yourMicrophoneLevel: 'Your microphone level',
  videoOf: (name: string) => `Video of ${name}`,
  microphoneLevelOf: (name: string) => `Microphone level of ${name}`,
  screenOf: (name: string) => `Screen of ${name}`,
  unknownParticipant: 'Participant',
  mutedName: (name: string) => `${name} (muted)`,

  callControls: 'Call controls',
  mute: 'Mute',
  unmute: 'Unmute',
  cameraOff: 'Camera off',
  cameraOn: 'Camera on',
  shareScreen: 'Share screen',
  stopSharing: 'Stop sharing',
  invite: 'Invite',
  leave: 'Leave',

  chat: 'Chat',
  chatMessages: 'Chat messages',
  chatMessage: 'Message',
  chatSend: 'Send',
  chatSelf: 'You',
  chatNotSent: 'Not sent.',
  chatRetry: 'Retry',

  inviteLink: 'Invite link (works once per person you send it to)',
  inviteCopy: 'Copy',
  inviteCopied: 'Invite link copied.',
  inviteCopyByHand: 'Select the link and copy it.',
  inviteFailed: 'Could not create an invite',

  reconnecting: 'Connection lost. Reconnecting\u2026',
  peerReconnecting: (name: string) => `Connection lost. Waiting for ${name} to reconnect\u2026`,
  // Neutral: a poor path to someone may be their link or ours (ours is said in the status line).
  peerPoor: (name: string) => `Poor connection with ${name}`,
  qualityUnknown: (name: string) => `Connection to ${name}: measuring`,
  qualityLost: (name: string) => `Connection to ${name}: lost`,
  quality: (name: string, q: { level: 'good' | 'fair' | 'poor'; rttMs: number | null; loss: number | null }) =>
    `Connection to ${name}: ${q.level}` +
    (q.rttMs !== null ? `, round trip ${q.rttMs} ms` : '') +
    (q.loss !== null ? `, ${Math.round(q.loss * 100)}% loss` : ''),
  reconnected: 'Reconnected.',
  joinDelayed: 'The service is briefly unavailable. Joining again in a moment\u2026',
  weakLink: 'Your connection is weak: your video is reduced so that you can still be heard.',
  joinFailed: 'Could not join',
  screenNotPossible: 'Screen sharing is not possible now',
  screenCancelled: 'Screen sharing was cancelled or is not allowed.',
};

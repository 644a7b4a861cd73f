// The Room resource (docs/api.md) from a stored room. Fields without a value
// (started_at before the start, ...) are omitted, as the interface allows.
import type { RoomView } from '../../domain/rooms/rooms.service.js';

function joinUrl(publicUrl: string, token: string): string {
  return `${publicUrl}/join/${token}`;
}

export function presentRoom(view: RoomView, publicUrl: string) {
  const { row } = view;
  return {
    name: row.name,
    token: row.token,
    status: row.status,
    access_token: row.access_token,
    guest_token: row.guest_token,
    host_join_url: joinUrl(publicUrl, row.access_token),
    guest_join_url: joinUrl(publicUrl, row.guest_token),
    host_display_name: row.host_display_name,
    guest_display_name: row.guest_display_name,
    enable_chat: row.enable_chat,
    enable_screenshare: row.enable_screenshare,
    enable_invites: row.enable_invites,
    enable_audio_indicator: row.enable_audio_indicator,
    enable_waiting_room: row.enable_waiting_room,
    locale: row.locale ?? undefined,
    current_participants: view.currentParticipants,
    waiting_participants: view.waitingParticipants,
    expected_guest_count: 1 + view.additionalTokens.length,
    scheduled_at: row.scheduled_at.toISOString(),
    meeting_duration: row.meeting_duration,
    return_url: row.return_url,
    host_return_url: row.host_return_url ?? undefined,
    permanent: row.permanent,
    doctor_id: row.doctor_id ?? undefined,
    additional_access_tokens: view.showAdditionalTokens
      ? view.additionalTokens.map((token) => ({ token, join_url: joinUrl(publicUrl, token) }))
      : undefined,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    started_at: row.started_at?.toISOString(),
    ended_at: row.ended_at?.toISOString(),
    closed_at: row.closed_at?.toISOString(),
  };
}

-- The waiting room and the room's language (docs/design.md, "Waiting room" and "Languages and layout").
--
-- The waiting room (docs/signaling.md "Waiting room"). A room with
-- enable_waiting_room holds everyone who comes through a guest, additional
-- guest or invite link as a participant whose admission is 'waiting' until a
-- host admits or denies them. The host link is always 'admitted'. A removed or
-- denied participant keeps its row, so that its token can never come back.
ALTER TABLE rooms ADD COLUMN enable_waiting_room boolean NOT NULL DEFAULT false;

-- The language of the room's participant pages (src/shared/i18n/languages.ts), null: the browser's.
ALTER TABLE rooms ADD COLUMN locale text;

ALTER TABLE participants ADD COLUMN admission text NOT NULL DEFAULT 'admitted'
  CHECK (admission IN ('waiting', 'admitted', 'denied', 'removed'));

-- The version trigger of 0002, with the new setting among the represented columns.
DROP TRIGGER rooms_version ON rooms;
CREATE TRIGGER rooms_version BEFORE UPDATE ON rooms FOR EACH ROW
  WHEN ((OLD.name, OLD.status, OLD.organization_id, OLD.doctor_id, OLD.host_display_name, OLD.guest_display_name,
         OLD.enable_chat, OLD.enable_screenshare, OLD.enable_invites, OLD.enable_audio_indicator, OLD.enable_waiting_room, OLD.locale,
         OLD.scheduled_at, OLD.meeting_duration, OLD.return_url, OLD.host_return_url, OLD.permanent, OLD.updated_at,
         OLD.started_at, OLD.ended_at, OLD.closed_at)
        IS DISTINCT FROM
        (NEW.name, NEW.status, NEW.organization_id, NEW.doctor_id, NEW.host_display_name, NEW.guest_display_name,
         NEW.enable_chat, NEW.enable_screenshare, NEW.enable_invites, NEW.enable_audio_indicator, NEW.enable_waiting_room, NEW.locale,
         NEW.scheduled_at, NEW.meeting_duration, NEW.return_url, NEW.host_return_url, NEW.permanent, NEW.updated_at,
         NEW.started_at, NEW.ended_at, NEW.closed_at))
  EXECUTE FUNCTION rooms_bump_version();

-- No lost or clobbered writes (issue 5): room versions for ETag / If-Match, and
-- Idempotency-Key records for POST /api/rooms.

-- The room's version is its ETag. A trigger bumps it whenever a column of the
-- room's API representation changes, whoever writes the row (the REST API, or
-- the call lifecycle starting and ending the room), so no writer can forget it.
-- Bookkeeping columns (emptied_at, cleanup_base_at) are left out on purpose: a
-- participant joining must not make an integrator's If-Match fail. A new column
-- that appears in the representation belongs in the list below.
ALTER TABLE rooms ADD COLUMN version integer NOT NULL DEFAULT 1;

CREATE FUNCTION rooms_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.version := OLD.version + 1;
  RETURN NEW;
END $$;

CREATE TRIGGER rooms_version BEFORE UPDATE ON rooms FOR EACH ROW
  WHEN ((OLD.name, OLD.status, OLD.organization_id, OLD.doctor_id, OLD.host_display_name, OLD.guest_display_name,
         OLD.enable_chat, OLD.enable_screenshare, OLD.enable_invites, OLD.enable_audio_indicator, OLD.scheduled_at,
         OLD.meeting_duration, OLD.return_url, OLD.host_return_url, OLD.permanent, OLD.updated_at, OLD.started_at,
         OLD.ended_at, OLD.closed_at)
        IS DISTINCT FROM
        (NEW.name, NEW.status, NEW.organization_id, NEW.doctor_id, NEW.host_display_name, NEW.guest_display_name,
         NEW.enable_chat, NEW.enable_screenshare, NEW.enable_invites, NEW.enable_audio_indicator, NEW.scheduled_at,
         NEW.meeting_duration, NEW.return_url, NEW.host_return_url, NEW.permanent, NEW.updated_at, NEW.started_at,
         NEW.ended_at, NEW.closed_at))
  EXECUTE FUNCTION rooms_bump_version();

-- One row per (API token, Idempotency-Key) for 24 hours. The primary key is what
-- makes concurrent retries safe: the second insert of a key waits for the first
-- transaction and then conflicts, so exactly one room is created. The room is
-- kept as its token (no foreign key): a key whose room was deleted still answers
-- for that room instead of silently creating a second one.
CREATE TABLE idempotency_keys (
  token_id uuid NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
  key text NOT NULL,
  fingerprint bytea NOT NULL,
  room_token text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (token_id, key)
);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

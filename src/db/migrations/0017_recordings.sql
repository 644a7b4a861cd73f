-- Recording with consent (docs/design.md, "Recording with consent").

-- The room setting (feature `recording`): the host may record this room's call, with everyone's consent.
ALTER TABLE rooms ADD COLUMN enable_recording boolean NOT NULL DEFAULT false;

-- One row
-- per recording of a room, the consents it was made under, and who downloaded
-- or deleted it.
--
-- status: recording -> processing -> ready | failed. `lease_until` is the
-- lease of the node that works on it: while `recording`, the node that records
-- renews it every 10 s; while `processing`, the node that composes the file
-- holds it. A lease that lapsed (its node died) lets the jobs of any node take
-- the recording on, so that none stays `recording` or `processing`.
CREATE TABLE recordings (
  id uuid PRIMARY KEY,
  room_id bigint NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('recording', 'processing', 'ready', 'failed')),
  started_by text NOT NULL,
  started_at timestamptz NOT NULL,
  ended_at timestamptz,
  duration_seconds double precision,
  size_bytes bigint,
  content_type text,
  lease_until timestamptz,
  -- Processing attempts so far: a recording whose composing kills its node every time is given up.
  attempts integer NOT NULL DEFAULT 0,
  error text
);
-- One recording at a time per room.
CREATE UNIQUE INDEX recordings_one_at_a_time ON recordings (room_id) WHERE status = 'recording';
CREATE INDEX recordings_room_idx ON recordings (room_id, started_at);
-- The jobs' work: leases to look at, and retention.
CREATE INDEX recordings_leased_idx ON recordings (lease_until) WHERE status IN ('recording', 'processing');
CREATE INDEX recordings_started_idx ON recordings (started_at);

CREATE TABLE recording_consents (
  recording_id uuid NOT NULL REFERENCES recordings (id) ON DELETE CASCADE,
  peer_id text NOT NULL,
  display_name text NOT NULL,
  role text NOT NULL CHECK (role IN ('host', 'guest')),
  accepted_at timestamptz NOT NULL,
  PRIMARY KEY (recording_id, peer_id)
);

-- Downloads and deletions. Kept after the recording is deleted (that is when
-- its deletion is worth reading), so it refers to the recording by value and
-- carries the scope an API token is checked against; it goes with its tenant.
CREATE TABLE recording_audit (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  recording_id uuid NOT NULL,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  organization_id uuid,
  room_token text NOT NULL,
  action text NOT NULL CHECK (action IN ('download', 'delete')),
  -- The API token that did it (its label is read from api_tokens); NULL: Parley itself (retention).
  token_id uuid,
  at timestamptz NOT NULL
);
CREATE INDEX recording_audit_recording_idx ON recording_audit (recording_id, id);

-- The files of deleted recordings, whichever statement deleted them (the API,
-- the room's deletion or its automatic cleanup, the tenant's, retention):
-- the trigger writes the mark in the deleting transaction, and the recordings
-- job removes the directory and then the mark. A node killed in between leaves
-- the mark, so no file outlives its row for longer than one run of the job.
CREATE TABLE recording_deleted_files (
  recording_id uuid PRIMARY KEY,
  deleted_at timestamptz NOT NULL
);

CREATE FUNCTION recordings_mark_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO recording_deleted_files (recording_id, deleted_at) VALUES (OLD.id, now()) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

CREATE TRIGGER recordings_mark_deleted AFTER DELETE ON recordings FOR EACH ROW EXECUTE FUNCTION recordings_mark_deleted();

-- Parley's schema. Plain SQL that runs unchanged on PGlite and PostgreSQL.
-- Every list and lookup the API runs has a named index below.

CREATE TABLE tenants (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  default_return_url text NOT NULL,
  timezone text NOT NULL,
  created_at timestamptz NOT NULL
);

CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX organizations_tenant_idx ON organizations (tenant_id);

CREATE TABLE doctors (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX doctors_organization_idx ON doctors (organization_id);

-- API tokens are stored only as SHA-256 hashes (they are shown once, at issue).
CREATE TABLE api_tokens (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  label text,
  token_hash bytea NOT NULL,
  created_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE UNIQUE INDEX api_tokens_hash_key ON api_tokens (token_hash);

CREATE TABLE tenant_features (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  feature text NOT NULL,
  enabled boolean NOT NULL,
  PRIMARY KEY (tenant_id, feature)
);

CREATE TABLE organization_features (
  organization_id uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  feature text NOT NULL,
  enabled boolean NOT NULL,
  PRIMARY KEY (organization_id, feature)
);

-- id orders rooms by creation (oldest first) and is the keyset for pagination;
-- token is the public identifier.
CREATE TABLE rooms (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  organization_id uuid REFERENCES organizations (id) ON DELETE CASCADE,
  doctor_id uuid REFERENCES doctors (id) ON DELETE SET NULL,
  token text NOT NULL,
  access_token text NOT NULL,
  guest_token text NOT NULL,
  name text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'started', 'ended', 'closed')),
  host_display_name text,
  guest_display_name text,
  enable_chat boolean NOT NULL,
  enable_screenshare boolean NOT NULL,
  enable_invites boolean NOT NULL,
  enable_audio_indicator boolean NOT NULL,
  scheduled_at timestamptz NOT NULL,
  meeting_duration integer NOT NULL,
  return_url text NOT NULL,
  host_return_url text,
  permanent boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  started_at timestamptz,
  ended_at timestamptz,
  closed_at timestamptz,
  -- When the last participant left; drives started -> ended after the grace period.
  emptied_at timestamptz,
  -- Automatic cleanup counts from the later of the scheduled end and the last activity.
  cleanup_base_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX rooms_token_key ON rooms (token);
CREATE UNIQUE INDEX rooms_access_token_key ON rooms (access_token);
CREATE UNIQUE INDEX rooms_guest_token_key ON rooms (guest_token);
CREATE INDEX rooms_tenant_list_idx ON rooms (tenant_id, id);
CREATE INDEX rooms_organization_list_idx ON rooms (organization_id, id) WHERE organization_id IS NOT NULL;
CREATE INDEX rooms_cleanup_idx ON rooms (cleanup_base_at) WHERE NOT permanent;
CREATE INDEX rooms_emptied_idx ON rooms (emptied_at) WHERE status = 'started' AND emptied_at IS NOT NULL;

-- Extra guest accesses: the additional guests of the room and invites made in the call.
CREATE TABLE room_guest_tokens (
  token text PRIMARY KEY,
  room_id bigint NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
  kind text NOT NULL CHECK (kind IN ('additional', 'invite')),
  created_at timestamptz NOT NULL
);
CREATE INDEX room_guest_tokens_room_idx ON room_guest_tokens (room_id, kind, created_at);

-- Room counts per tenant and per organization, kept by triggers so that
-- Total-Count never scans the rooms table. organization_id '0000...' = whole tenant.
CREATE TABLE room_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  organization_id uuid NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (tenant_id, organization_id)
);

CREATE FUNCTION room_counts_add(t uuid, o uuid, delta integer) RETURNS void LANGUAGE sql AS $$
  INSERT INTO room_counts AS c (tenant_id, organization_id, count) VALUES (t, o, delta)
    ON CONFLICT (tenant_id, organization_id) DO UPDATE SET count = c.count + delta;
$$;

CREATE FUNCTION rooms_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM room_counts_add(NEW.tenant_id, '00000000-0000-0000-0000-000000000000', 1);
  ELSIF TG_OP = 'DELETE' THEN
    PERFORM room_counts_add(OLD.tenant_id, '00000000-0000-0000-0000-000000000000', -1);
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.organization_id IS NOT NULL THEN
    PERFORM room_counts_add(OLD.tenant_id, OLD.organization_id, -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.organization_id IS NOT NULL THEN
    PERFORM room_counts_add(NEW.tenant_id, NEW.organization_id, 1);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER rooms_count_insert AFTER INSERT ON rooms FOR EACH ROW EXECUTE FUNCTION rooms_count_change();
CREATE TRIGGER rooms_count_delete AFTER DELETE ON rooms FOR EACH ROW EXECUTE FUNCTION rooms_count_change();
CREATE TRIGGER rooms_count_move AFTER UPDATE OF organization_id ON rooms FOR EACH ROW
  WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id) EXECUTE FUNCTION rooms_count_change();

-- The nodes of a cluster record that they are alive; the participants of a
-- node that stopped doing so are marked as left by the survivors.
CREATE TABLE nodes (
  id text PRIMARY KEY,
  started_at timestamptz NOT NULL,
  heartbeat_at timestamptz NOT NULL
);

-- One row per join: each participant session has its own token.
CREATE TABLE participants (
  token text PRIMARY KEY,
  room_id bigint NOT NULL REFERENCES rooms (id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('host', 'guest')),
  display_name text NOT NULL,
  node_id text NOT NULL,
  joined_at timestamptz NOT NULL,
  left_at timestamptz
);
CREATE INDEX participants_connected_idx ON participants (room_id) WHERE left_at IS NULL;
CREATE INDEX participants_node_idx ON participants (node_id) WHERE left_at IS NULL;

-- Feedback outlives its room, so room_token is kept as a value, not a reference.
-- local_day is created_at's date in the tenant's timezone, the unit of the from/to filters.
CREATE TABLE room_feedbacks (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  room_token text NOT NULL,
  participant_token text,
  rating text NOT NULL CHECK (rating IN ('good', 'neutral', 'bad')),
  feedback text,
  local_day date NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX room_feedbacks_participant_key ON room_feedbacks (participant_token);
CREATE INDEX room_feedbacks_day_idx ON room_feedbacks (tenant_id, local_day, id);
CREATE INDEX room_feedbacks_rating_day_idx ON room_feedbacks (tenant_id, rating, local_day, id);

-- Feedback counts per tenant, day and rating, kept by a trigger: the summary and
-- Total-Count of the feedback list read these instead of scanning room_feedbacks.
CREATE TABLE feedback_daily_counts (
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  day date NOT NULL,
  rating text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (tenant_id, day, rating)
);

CREATE FUNCTION room_feedbacks_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO feedback_daily_counts AS c (tenant_id, day, rating, count)
      VALUES (NEW.tenant_id, NEW.local_day, NEW.rating, 1)
      ON CONFLICT (tenant_id, day, rating) DO UPDATE SET count = c.count + 1;
  ELSE
    UPDATE feedback_daily_counts SET count = count - 1
      WHERE tenant_id = OLD.tenant_id AND day = OLD.local_day AND rating = OLD.rating;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER room_feedbacks_count_insert AFTER INSERT ON room_feedbacks FOR EACH ROW EXECUTE FUNCTION room_feedbacks_count_change();
CREATE TRIGGER room_feedbacks_count_delete AFTER DELETE ON room_feedbacks FOR EACH ROW EXECUTE FUNCTION room_feedbacks_count_change();

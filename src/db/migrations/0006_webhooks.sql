-- Webhooks (docs/webhooks.md) and participant sessions (docs/api.md "Participant
-- sessions"). Named 0006: 0005 is the waiting room's. Migrations are applied by
-- name, each once, so either may reach a database first.

-- An integrator's receiver. The secret is kept as issued: signing needs the key
-- itself, so a hash cannot serve (docs/webhooks.md "The secret").
-- events NULL = every type, including types added later.
CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  url text NOT NULL,
  events text[],
  description text,
  secret text NOT NULL,
  created_at timestamptz NOT NULL,
  -- The first failure of the current run of failures; NULL after a success.
  failing_since timestamptz,
  disabled_at timestamptz,
  disabled_reason text
);
CREATE INDEX webhook_endpoints_tenant_idx ON webhook_endpoints (tenant_id, created_at);

-- The outbox: one row per event and endpoint, written in the transaction of the
-- change that causes the event. msg_id is the webhook-id header, the same on
-- every attempt. next_attempt_at NULL = due now; a claim moves it past the
-- lease, so a node killed mid-delivery leaves it due again (docs/webhooks.md).
CREATE TABLE webhook_messages (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  msg_id text NOT NULL,
  type text NOT NULL,
  data jsonb NOT NULL,
  occurred_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  delivered_at timestamptz,
  -- Retries exhausted: given up.
  failed_at timestamptz,
  last_status integer,
  last_error text
);
CREATE INDEX webhook_messages_due_idx ON webhook_messages (next_attempt_at NULLS FIRST, id)
  WHERE delivered_at IS NULL AND failed_at IS NULL;
CREATE INDEX webhook_messages_endpoint_idx ON webhook_messages (endpoint_id);
CREATE INDEX webhook_messages_done_idx ON webhook_messages ((coalesce(delivered_at, failed_at)))
  WHERE delivered_at IS NOT NULL OR failed_at IS NOT NULL;

-- Whether any live endpoint of the tenant wants this type: the only cost an
-- event has for a tenant without endpoints (one probe of webhook_endpoints_tenant_idx).
CREATE FUNCTION webhook_wanted(t uuid, event_type text) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM webhook_endpoints e
    WHERE e.tenant_id = t AND e.disabled_at IS NULL AND (e.events IS NULL OR event_type = ANY (e.events)));
$$;

-- One message per endpoint that wants the event, with one webhook-id for all of them.
-- src/domain/webhooks/webhook-events.ts enqueueEvent() calls this from application code.
CREATE FUNCTION webhook_enqueue(t uuid, event_type text, event_data jsonb) RETURNS void LANGUAGE sql AS $$
  INSERT INTO webhook_messages (endpoint_id, msg_id, type, data, occurred_at)
  SELECT e.id, m.msg_id, event_type, event_data, clock_timestamp()
  FROM webhook_endpoints e, (SELECT 'msg_' || replace(gen_random_uuid()::text, '-', '') AS msg_id) m
  WHERE e.tenant_id = t AND e.disabled_at IS NULL AND (e.events IS NULL OR event_type = ANY (e.events));
$$;

-- Room and presence events come from triggers: a room's status is changed by
-- many statements (a join, the end of the grace, close, delete, the automatic
-- cleanup, a node found dead), and a trigger is part of each of them, so no
-- writer can forget its event and none can commit without it (like the
-- version trigger of 0002).
CREATE FUNCTION rooms_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r rooms;
  event_type text;
BEGIN
  IF TG_OP = 'DELETE' THEN
    r := OLD;
    event_type := 'room.deleted';
  ELSE
    r := NEW;
    event_type := 'room.' || NEW.status;
  END IF;
  IF webhook_wanted(r.tenant_id, event_type) THEN
    PERFORM webhook_enqueue(r.tenant_id, event_type,
      jsonb_build_object('room_token', r.token, 'status', r.status, 'organization_id', r.organization_id));
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER rooms_webhook_status AFTER UPDATE OF status ON rooms FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('started', 'ended', 'closed'))
  EXECUTE FUNCTION rooms_webhook_event();
CREATE TRIGGER rooms_webhook_delete AFTER DELETE ON rooms FOR EACH ROW EXECUTE FUNCTION rooms_webhook_event();

-- participant.joined on a join into the call (insert), a waiting participant
-- let in (admission waiting -> admitted) or a resume after leaving (left_at
-- back to NULL); participant.waiting when someone starts waiting in a room with
-- a waiting room (0005), or comes back to wait; participant.left when someone
-- who was in the call leaves or is removed (a wait that ends without being let
-- in is no leave). Joins and leaves are the hot path, so the insert is one
-- statement: the room's tenant joined to the endpoints that want the type,
-- which for a tenant without any finds nothing and writes nothing.
CREATE FUNCTION participants_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  event_type text;
BEGIN
  IF TG_OP = 'INSERT' OR OLD.left_at IS NOT NULL AND NEW.left_at IS NULL THEN
    event_type := CASE NEW.admission WHEN 'waiting' THEN 'participant.waiting' ELSE 'participant.joined' END;
  ELSIF OLD.left_at IS NULL AND NEW.left_at IS NOT NULL AND OLD.admission = 'admitted' THEN
    event_type := 'participant.left';
  ELSIF OLD.left_at IS NULL AND NEW.left_at IS NULL AND OLD.admission = 'waiting' AND NEW.admission = 'admitted' THEN
    event_type := 'participant.joined';
  ELSE
    RETURN NULL;
  END IF;
  INSERT INTO webhook_messages (endpoint_id, msg_id, type, data, occurred_at)
  SELECT e.id, m.msg_id, event_type,
    jsonb_build_object('room_token', r.token, 'participant_token', NEW.token, 'role', NEW.role, 'display_name', NEW.display_name),
    clock_timestamp()
  FROM rooms r
  JOIN webhook_endpoints e ON e.tenant_id = r.tenant_id AND e.disabled_at IS NULL AND (e.events IS NULL OR event_type = ANY (e.events))
  CROSS JOIN (SELECT 'msg_' || replace(gen_random_uuid()::text, '-', '') AS msg_id) m
  WHERE r.id = NEW.room_id;
  RETURN NULL;
END $$;

CREATE TRIGGER participants_webhook_join AFTER INSERT ON participants FOR EACH ROW EXECUTE FUNCTION participants_webhook_event();
CREATE TRIGGER participants_webhook_presence AFTER UPDATE OF left_at, admission ON participants FOR EACH ROW
  WHEN ((OLD.left_at IS NULL) <> (NEW.left_at IS NULL) OR OLD.admission IS DISTINCT FROM NEW.admission)
  EXECUTE FUNCTION participants_webhook_event();

-- Participant sessions (docs/design.md, "Participant sessions"): what the browser measured, one JSON object
-- per report ({rtt, loss, kbps, relayed}), the last 360 (an hour at one report
-- per 10 s). The summary is computed when the sessions are read.
ALTER TABLE participants ADD COLUMN network_reports jsonb NOT NULL DEFAULT '[]'::jsonb;
CREATE INDEX participants_room_idx ON participants (room_id, joined_at);

-- Sessions outlive their room as feedback does (0001: room_token as a value, no
-- reference): a room's participants are copied here when it is deleted, by
-- the API or the automatic cleanup, in the same statement.
CREATE TABLE deleted_room_sessions (
  participant_token text PRIMARY KEY,
  tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  organization_id uuid,
  room_token text NOT NULL,
  role text NOT NULL,
  display_name text NOT NULL,
  joined_at timestamptz NOT NULL,
  left_at timestamptz NOT NULL,
  network_reports jsonb NOT NULL
);
CREATE INDEX deleted_room_sessions_room_idx ON deleted_room_sessions (tenant_id, room_token, joined_at);

-- Not when the room goes because its tenant is deleted: the sessions would go
-- with the tenant anyway, and their insert would refer to a tenant already gone.
CREATE FUNCTION rooms_keep_sessions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO deleted_room_sessions (participant_token, tenant_id, organization_id, room_token, role, display_name, joined_at, left_at, network_reports)
  SELECT p.token, OLD.tenant_id, OLD.organization_id, OLD.token, p.role, p.display_name, p.joined_at, coalesce(p.left_at, now()), p.network_reports
  FROM participants p WHERE p.room_id = OLD.id AND EXISTS (SELECT 1 FROM tenants t WHERE t.id = OLD.tenant_id);
  RETURN OLD;
END $$;

CREATE TRIGGER rooms_keep_sessions BEFORE DELETE ON rooms FOR EACH ROW EXECUTE FUNCTION rooms_keep_sessions();

-- The helpers that triggers call, in PL/pgSQL (issues 14 and 15). 0006 and
-- 0007 wrote them in LANGUAGE sql. PostgreSQL inlines such a function only into
-- a query's own expressions; called from PL/pgSQL (PERFORM) it parses and plans
-- its body again on every call, while PL/pgSQL plans its statements once per
-- connection. Measured on PostgreSQL 15 (bench/README.md "Issue 15: plans"):
-- - a room event (room.started, .ended, .closed, .deleted) for a tenant with
--   an endpoint cost 200–420 µs through webhook_wanted and webhook_enqueue,
--   50–100 µs with the enqueue below; without an endpoint 20–30 µs either way;
-- - every room create and delete called room_counts_add: 45 µs a call.
-- The participants trigger of 0006 already wrote its message in a statement of
-- its own.

-- Unchanged signature: src/domain/webhooks/webhook-events.ts calls it for
-- feedback.created. It writes nothing when no endpoint wants the event, so the
-- room trigger no longer asks webhook_wanted first.
CREATE OR REPLACE FUNCTION webhook_enqueue(t uuid, event_type text, event_data jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  -- One message per endpoint that wants the event, with one webhook-id for all of them.
  INSERT INTO webhook_messages (endpoint_id, msg_id, type, data, occurred_at)
  SELECT e.id, m.msg_id, event_type, event_data, clock_timestamp()
  FROM webhook_endpoints e, (SELECT 'msg_' || replace(gen_random_uuid()::text, '-', '') AS msg_id) m
  WHERE e.tenant_id = t AND e.disabled_at IS NULL AND (e.events IS NULL OR event_type = ANY (e.events));
END $$;

CREATE OR REPLACE FUNCTION rooms_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $$
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
  PERFORM webhook_enqueue(r.tenant_id, event_type,
    jsonb_build_object('room_token', r.token, 'status', r.status, 'organization_id', r.organization_id));
  RETURN NULL;
END $$;

DROP FUNCTION webhook_wanted(uuid, text);

-- Unchanged signature and body: rooms_count_change (0007) calls it.
CREATE OR REPLACE FUNCTION room_counts_add(t uuid, o uuid, s smallint, delta integer) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO room_counts AS c (tenant_id, organization_id, shard, count) VALUES (t, o, s, delta)
    ON CONFLICT (tenant_id, organization_id, shard) DO UPDATE SET count = c.count + delta;
END $$;

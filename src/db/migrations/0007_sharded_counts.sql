-- Counters spread over several rows (issue 15). 0001 kept one room_counts row
-- per (tenant, organization) and one feedback_daily_counts row per (tenant,
-- day, rating): every create of one tenant updated the same row and waited for
-- the previous create's commit (its row lock is held until then), which capped
-- one tenant at about one create per commit flush whatever the nodes. Now each
-- counter is split into shards; a change goes to the shard of the row's id
-- (identity ids are consecutive, so concurrent creates land on different
-- shards) and readers sum the shards. A shard may go negative (a row counted
-- before this migration, in shard 0, deleted from another shard): only the
-- sum means anything.
--
-- Rooms: 16 shards, a Total-Count sums at most 16 rows of the primary key.
-- Feedback: 4 shards per (day, rating): at most one feedback per participant
-- session, after a call, so far fewer writes than room creates, while the
-- all-time summary reads every (day, rating, shard) row of the tenant: 16
-- shards would make it read 16 times the rows.
--
-- Existing counts stay where they are, as shard 0.

ALTER TABLE room_counts ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE room_counts DROP CONSTRAINT room_counts_pkey;
ALTER TABLE room_counts ADD CONSTRAINT room_counts_pkey PRIMARY KEY (tenant_id, organization_id, shard);
-- Every writer names its shard.
ALTER TABLE room_counts ALTER COLUMN shard DROP DEFAULT;

ALTER TABLE feedback_daily_counts ADD COLUMN shard smallint NOT NULL DEFAULT 0;
ALTER TABLE feedback_daily_counts DROP CONSTRAINT feedback_daily_counts_pkey;
ALTER TABLE feedback_daily_counts ADD CONSTRAINT feedback_daily_counts_pkey PRIMARY KEY (tenant_id, day, rating, shard);
ALTER TABLE feedback_daily_counts ALTER COLUMN shard DROP DEFAULT;

CREATE FUNCTION room_counts_add(t uuid, o uuid, s smallint, delta integer) RETURNS void LANGUAGE sql AS $$
  INSERT INTO room_counts AS c (tenant_id, organization_id, shard, count) VALUES (t, o, s, delta)
    ON CONFLICT (tenant_id, organization_id, shard) DO UPDATE SET count = c.count + delta;
$$;

-- The same triggers of 0001 call these functions, replaced in place.
-- A room deleted because its tenant is being deleted counts nothing: the
-- tenant's counts go with it, and an insert into room_counts would refer to a
-- tenant already gone (the foreign key failed the whole tenant delete; the same
-- guard as rooms_keep_sessions in 0006).
CREATE OR REPLACE FUNCTION rooms_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s smallint;
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = OLD.tenant_id) THEN
      RETURN NULL;
    END IF;
    s := OLD.id % 16;
    PERFORM room_counts_add(OLD.tenant_id, '00000000-0000-0000-0000-000000000000', s, -1);
  ELSE
    s := NEW.id % 16;
  END IF;
  IF TG_OP = 'INSERT' THEN
    PERFORM room_counts_add(NEW.tenant_id, '00000000-0000-0000-0000-000000000000', s, 1);
  END IF;
  IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.organization_id IS NOT NULL THEN
    PERFORM room_counts_add(OLD.tenant_id, OLD.organization_id, s, -1);
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.organization_id IS NOT NULL THEN
    PERFORM room_counts_add(NEW.tenant_id, NEW.organization_id, s, 1);
  END IF;
  RETURN NULL;
END $$;

DROP FUNCTION room_counts_add(uuid, uuid, integer);

-- A delete adds -1 to the deleted row's shard (0001 updated the one row); the
-- feedbacks of a tenant being deleted count nothing, as rooms above.
CREATE OR REPLACE FUNCTION room_feedbacks_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO feedback_daily_counts AS c (tenant_id, day, rating, shard, count)
      VALUES (NEW.tenant_id, NEW.local_day, NEW.rating, NEW.id % 4, 1)
      ON CONFLICT (tenant_id, day, rating, shard) DO UPDATE SET count = c.count + 1;
  ELSIF EXISTS (SELECT 1 FROM tenants t WHERE t.id = OLD.tenant_id) THEN
    INSERT INTO feedback_daily_counts AS c (tenant_id, day, rating, shard, count)
      VALUES (OLD.tenant_id, OLD.local_day, OLD.rating, OLD.id % 4, -1)
      ON CONFLICT (tenant_id, day, rating, shard) DO UPDATE SET count = c.count - 1;
  END IF;
  RETURN NULL;
END $$;

-- A statement that deletes many rooms updates the room counters in one fixed
-- order (issue 15: a deadlock between two nodes' cleanups).
--
-- 0007 spread each tenant's count over 16 shards, and the row trigger of 0001
-- subtracted one from the deleted room's shard, room by room. Two nodes'
-- cleanups each delete a batch of up to 500 rooms of one tenant in one
-- statement; their rooms' ids are consecutive, so one statement locked shards
-- 1, 2, 3 ... while the other locked 5, 6, 7 ... 15, 0, 1 ..., and each waited
-- for a shard the other held: "deadlock detected" for one of them (23 rounds
-- of 60 with two nodes deleting 200 rooms each at once, before this change).
--
-- Now one trigger per DELETE statement adds up what the statement deleted, per
-- (tenant, organization, shard), and applies it in key order: statements that
-- all lock in that order wait for each other, never in a circle. A statement
-- deleting 500 rooms also writes at most 16 counter rows per tenant and 16
-- per organization, instead of one or two per room.
-- Creates and moves between organizations stay row triggers: a create touches
-- one shard of the tenant and then the same shard of its organization, which
-- is that order too.
--
-- Feedback counters are not changed: nothing deletes feedback but a tenant's
-- delete, which counts nothing (0007).

CREATE OR REPLACE FUNCTION rooms_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s smallint := NEW.id % 16;
BEGIN
  IF TG_OP = 'INSERT' THEN
    PERFORM room_counts_add(NEW.tenant_id, '00000000-0000-0000-0000-000000000000', s, 1);
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.organization_id IS NOT NULL THEN
    PERFORM room_counts_add(OLD.tenant_id, OLD.organization_id, s, -1);
  END IF;
  IF NEW.organization_id IS NOT NULL THEN
    PERFORM room_counts_add(NEW.tenant_id, NEW.organization_id, s, 1);
  END IF;
  RETURN NULL;
END $$;

-- Rooms deleted because their tenant is being deleted count nothing, as in
-- 0007: the tenant's counts go with it.
CREATE FUNCTION rooms_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO room_counts AS c (tenant_id, organization_id, shard, count)
  SELECT g.tenant_id, g.organization_id, g.shard, -count(*)
  FROM (
    SELECT d.tenant_id, '00000000-0000-0000-0000-000000000000'::uuid AS organization_id, (d.id % 16)::smallint AS shard FROM deleted_rooms d
    UNION ALL
    SELECT d.tenant_id, d.organization_id, (d.id % 16)::smallint FROM deleted_rooms d WHERE d.organization_id IS NOT NULL
  ) g
  WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = g.tenant_id)
  GROUP BY g.tenant_id, g.organization_id, g.shard
  ORDER BY g.tenant_id, g.organization_id, g.shard
  ON CONFLICT (tenant_id, organization_id, shard) DO UPDATE SET count = c.count + excluded.count;
  RETURN NULL;
END $$;

DROP TRIGGER rooms_count_delete ON rooms;
CREATE TRIGGER rooms_count_delete AFTER DELETE ON rooms REFERENCING OLD TABLE AS deleted_rooms
  FOR EACH STATEMENT EXECUTE FUNCTION rooms_count_deleted();

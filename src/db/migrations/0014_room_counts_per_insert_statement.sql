-- Creates are counted once per INSERT statement, in the counters' key order
-- (issue 15, POST room: the creates of one turn of the event loop are one
-- statement, rooms.repo.ts).
--
-- Until now a row trigger added each new room to the shard of its id, one
-- upsert (two with an organization) per room. A statement inserting several
-- rooms would lock their shards in the order of their ids, which wrap around
-- the 16 shards: two such statements of one tenant could each hold a shard the
-- other waits for, the deadlock 0010 removed from deletes.
--
-- Now, as for deletes, one trigger per statement adds up what the statement
-- inserted per (tenant, organization) and applies it in key order. A
-- statement's rooms of one key go to one shard, that of the key's first id:
-- a create alone lands where the row trigger put it, and a statement of ten
-- creates of one tenant writes one counter row instead of ten. Which shard a
-- room is counted in never mattered to readers, who sum the shards (0007),
-- so a room deleted later may be subtracted from another shard.
CREATE FUNCTION rooms_count_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO room_counts AS c (tenant_id, organization_id, shard, count)
  SELECT g.tenant_id, g.organization_id, (min(g.id) % 16)::smallint, count(*)
  FROM (
    SELECT n.tenant_id, '00000000-0000-0000-0000-000000000000'::uuid AS organization_id, n.id FROM inserted_rooms n
    UNION ALL
    SELECT n.tenant_id, n.organization_id, n.id FROM inserted_rooms n WHERE n.organization_id IS NOT NULL
  ) g
  GROUP BY g.tenant_id, g.organization_id
  ORDER BY g.tenant_id, g.organization_id
  ON CONFLICT (tenant_id, organization_id, shard) DO UPDATE SET count = c.count + excluded.count;
  RETURN NULL;
END $$;

DROP TRIGGER rooms_count_insert ON rooms;
CREATE TRIGGER rooms_count_insert AFTER INSERT ON rooms REFERENCING NEW TABLE AS inserted_rooms
  FOR EACH STATEMENT EXECUTE FUNCTION rooms_count_inserted();

-- The row trigger is left with moves between organizations (its WHEN): out
-- of the old one, into the new one, in the room's shard. Both in one
-- statement, in key order like the statement triggers: it used to take the old
-- organization's row first, and a move from a higher organization to a lower
-- one, beside a statement counting rooms of both in the same shard, could
-- hold one row each and wait for the other's.
CREATE OR REPLACE FUNCTION rooms_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO room_counts AS c (tenant_id, organization_id, shard, count)
  SELECT NEW.tenant_id, m.organization_id, (NEW.id % 16)::smallint, m.change
  FROM (VALUES (OLD.organization_id, -1), (NEW.organization_id, 1)) AS m (organization_id, change)
  WHERE m.organization_id IS NOT NULL
  ORDER BY m.organization_id
  ON CONFLICT (tenant_id, organization_id, shard) DO UPDATE SET count = c.count + excluded.count;
  RETURN NULL;
END $$;

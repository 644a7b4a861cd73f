-- The room counter's row trigger holds its upserts itself (issue 15, POST room
-- against the independent baseline).
--
-- Since 0008 each create ran `PERFORM room_counts_add(...)`: a SELECT through
-- SPI that called a second PL/pgSQL function, which ran the upsert. The
-- upsert itself is the same; the call around it was a third of the counter's
-- cost. Measured with pgbench in PostgreSQL alone (2 clients, a room insert
-- per transaction, 3 rounds): 1.07× the inserts a second with the upsert in
-- the trigger, against 1.24× with no counter at all (bench/README.md). The
-- counter stays a trigger, so every insert into rooms is counted, whoever
-- makes it.
CREATE OR REPLACE FUNCTION rooms_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s smallint := NEW.id % 16;
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO room_counts AS c (tenant_id, organization_id, shard, count)
      VALUES (NEW.tenant_id, '00000000-0000-0000-0000-000000000000', s, 1)
      ON CONFLICT (tenant_id, organization_id, shard) DO UPDATE SET count = c.count + 1;
  END IF;
  -- A move between organizations (the trigger's WHEN): out of the old one, into the new one.
  IF TG_OP = 'UPDATE' AND OLD.organization_id IS NOT NULL THEN
    INSERT INTO room_counts AS c (tenant_id, organization_id, shard, count)
      VALUES (OLD.tenant_id, OLD.organization_id, s, -1)
      ON CONFLICT (tenant_id, organization_id, shard) DO UPDATE SET count = c.count - 1;
  END IF;
  IF NEW.organization_id IS NOT NULL THEN
    INSERT INTO room_counts AS c (tenant_id, organization_id, shard, count)
      VALUES (NEW.tenant_id, NEW.organization_id, s, 1)
      ON CONFLICT (tenant_id, organization_id, shard) DO UPDATE SET count = c.count + 1;
  END IF;
  RETURN NULL;
END $$;

DROP FUNCTION room_counts_add(uuid, uuid, smallint, integer);

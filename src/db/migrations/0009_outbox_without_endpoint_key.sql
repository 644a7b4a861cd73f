-- The outbox without a foreign key from each message to its endpoint (issue 14).
-- The key's check ran on every message a join or a leave wrote: a query of its
-- own that locks the endpoint's row FOR KEY SHARE, and concurrent joins of one
-- tenant share that one row, so PostgreSQL records their locks as multixacts
-- (bench/README.md "Webhooks: what the outbox costs"). What the key did is
-- done here instead:
-- - an endpoint's messages go with it (its delete, or its tenant's), by the
--   trigger below;
-- - a message written by a join while its endpoint was being deleted (the
--   join's snapshot still saw the endpoint) is never claimed: a claim joins
--   the endpoint, and purge() in webhook-messages.repo.ts (the cleanup job) deletes it.
ALTER TABLE webhook_messages DROP CONSTRAINT webhook_messages_endpoint_id_fkey;

CREATE FUNCTION webhook_endpoints_forget_messages() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM webhook_messages WHERE endpoint_id = OLD.id;
  RETURN NULL;
END $$;

CREATE TRIGGER webhook_endpoints_forget_messages AFTER DELETE ON webhook_endpoints
  FOR EACH ROW EXECUTE FUNCTION webhook_endpoints_forget_messages();

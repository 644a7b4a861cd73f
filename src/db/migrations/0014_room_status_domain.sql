-- A room's status checked by its type instead of a CHECK constraint of the
-- table (issue 15, create and PUT room against the independent baseline).
--
-- PostgreSQL parses a table's CHECK constraints from their stored text and
-- compiles them again in every statement that writes a row (it keeps them per
-- execution): 6 µs of PostgreSQL's CPU per create and per PUT in perf
-- profiles (bench/README.md), for a PUT that does not even write the status.
-- A domain's check runs only where a value is given to the column (a create,
-- a change of status), compiled from the type cache, and it refuses the same
-- values. The column first becomes a domain without a constraint, which
-- PostgreSQL does without rewriting the table; adding the constraint to the
-- domain then checks the rows. Only rooms_emptied_idx, whose predicate names
-- the status, is built again. The webhook trigger of 0006 names the column,
-- so it is made again as it was.
CREATE DOMAIN room_status AS text;
ALTER TABLE rooms DROP CONSTRAINT rooms_status_check;
DROP TRIGGER rooms_webhook_status ON rooms;
ALTER TABLE rooms ALTER COLUMN status TYPE room_status;
ALTER DOMAIN room_status ADD CONSTRAINT room_status_known CHECK (VALUE IN ('active', 'started', 'ended', 'closed'));
CREATE TRIGGER rooms_webhook_status AFTER UPDATE OF status ON rooms FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('started', 'ended', 'closed'))
  EXECUTE FUNCTION rooms_webhook_event();

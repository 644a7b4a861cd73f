-- The room's version (its ETag) is raised by the statements that change the
-- room's representation, in the same write, instead of by the trigger of 0002
-- (issue 15, PUT room against the independent baseline).
--
-- A BEFORE UPDATE row trigger makes PostgreSQL lock the row before the update
-- (to hand the trigger its final version), a second write to the row and to
-- the WAL for every update, whether or not the trigger's WHEN holds. For PUT
-- room that was 40–50 µs of PostgreSQL's CPU (300–350 µs for the statement;
-- guarded by `NEW.version = OLD.version` with the version set by the PUT, or
-- as an AFTER trigger that only checked, it cost nearly as much). Every write
-- of a room's representation is in src/domain/rooms/rooms.repo.ts, which sets
-- `version = version + 1` in each (NEXT_VERSION there), and
-- test/api/rooms-conditional.test.ts goes through each of them. Presence
-- bookkeeping (emptied_at, cleanup_base_at) still leaves the version alone.
DROP TRIGGER rooms_version ON rooms;
DROP FUNCTION rooms_bump_version();

-- A room's lists read in index order, without a sort in every statement
-- (issue 15, PUT room against the independent baseline).
--
-- GET and PUT read the room's connected and waiting participants and its
-- additional guests in order, as three subqueries of one statement
-- (rooms.repo.ts, extras). Over the indexes of 0001 each was an index scan
-- under a Sort, which PostgreSQL sets up, runs and ends on every execution,
-- empty or not: 15 µs of PostgreSQL's CPU per PUT in a perf profile
-- (bench/README.md). These indexes hold each list in the order it is read,
-- and the tokens it returns, so the lists need no sort and can be read from
-- the index alone. Each still serves what the one it replaces served (its
-- leading columns). Where statistics promise several connected participants
-- in a room, the planner may still prefer a bitmap scan and a sort.
CREATE INDEX participants_connected_ordered_idx ON participants (room_id, admission, joined_at) INCLUDE (token) WHERE left_at IS NULL;
DROP INDEX participants_connected_idx;
ALTER INDEX participants_connected_ordered_idx RENAME TO participants_connected_idx;

CREATE INDEX room_guest_tokens_room_ordered_idx ON room_guest_tokens (room_id, kind, created_at, token);
DROP INDEX room_guest_tokens_room_idx;
ALTER INDEX room_guest_tokens_room_ordered_idx RENAME TO room_guest_tokens_room_idx;

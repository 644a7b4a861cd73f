-- Group calls through an SFU (docs/design.md, "Group calls through an SFU"):
-- the Janus instance a room's media goes through, and its VideoRoom there.
-- One row per room, written once by whichever node gets there first (the
-- least loaded instance at that moment), so that every node sends the room's
-- participants to the same instance; moved only when that instance fails.
-- `instance` is the instance's API URL; `secret` is the VideoRoom's own
-- secret, which Parley alone knows (browsers never reach Janus's API).
CREATE TABLE sfu_rooms (
  room_id bigint PRIMARY KEY REFERENCES rooms (id) ON DELETE CASCADE,
  instance text NOT NULL,
  janus_room bigint NOT NULL,
  secret text NOT NULL,
  pinned_at timestamptz NOT NULL
);

-- The load of each instance (rooms pinned to it), read at every pin.
CREATE INDEX sfu_rooms_instance ON sfu_rooms (instance);

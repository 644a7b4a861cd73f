-- One-time actions of an installation, claimed with an insert: when several
-- nodes start together on an empty database, exactly one creates the tenant
-- "default" (the primary key decides, not a read-then-write).
CREATE TABLE instance_flags (
  name text PRIMARY KEY,
  set_at timestamptz NOT NULL
);

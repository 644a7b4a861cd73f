-- An organization may narrow its tenant's frame-ancestors (docs/design.md,
-- "Embedding"): the origins that may embed the join pages of the
-- organization's rooms, and that the pages talk to over postMessage. Only
-- origins of the tenant's list count (the list in effect is the intersection,
-- read with the tenant's, so a tenant narrowing its own list later narrows its
-- organizations' too). Canonical origins separated by single spaces; '' is
-- nobody. No row: the tenant's list.
CREATE TABLE organization_frame_ancestors (
  organization_id uuid PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  origins text NOT NULL
);

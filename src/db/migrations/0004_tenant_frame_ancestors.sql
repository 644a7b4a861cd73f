-- Origins that may embed a tenant's join pages in an iframe (the pages' CSP
-- frame-ancestors, docs/call.md "Embedding"). Canonical origins, separated by
-- single spaces, exactly as they go into the header. No row: nobody ('none').
CREATE TABLE tenant_frame_ancestors (
  tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
  origins text NOT NULL
);

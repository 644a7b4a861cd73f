// Feature toggles (docs/design.md#tenants-tokens-and-authentication): off by default; an organization's setting, where
// set, overrides its tenant's.
const FEATURES = ['permanent_rooms', 'additional_participants', 'recording'] as const;
export type Feature = (typeof FEATURES)[number];

export function isFeature(name: string): name is Feature {
  return (FEATURES as readonly string[]).includes(name);
}

// API key scopes (SPEC.md, Authentication 6) and modes.
export const allScopes = [
  "documents:read",
  "documents:write",
  "jobs:read",
  "jobs:write",
  "usage:read",
  "webhooks:manage",
] as const;
export type Scope = (typeof allScopes)[number];

export type Mode = "live" | "test";

export function isScope(s: string): s is Scope {
  return (allScopes as readonly string[]).includes(s);
}

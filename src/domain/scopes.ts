// API key scopes and modes: a key acts in one mode, live or test, with a set of scopes (docs/api.md, Basics).
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

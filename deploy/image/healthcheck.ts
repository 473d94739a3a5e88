// The image's HEALTHCHECK. It runs beside the role's processes, so it finds the role in /proc:
// a node that runs the API (roles api and all) is healthy when GET /healthz on PORT answers 200
// (the database is reachable); a worker node when one of its worker processes is alive (the
// supervisor restarts dead ones; a worker that lost its database exits and is restarted).
import { readdirSync, readFileSync } from "node:fs";

function running(script: string): boolean {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(script)) return true;
    } catch {}
  }
  return false;
}

if (running("roles/api.ts")) {
  const port = process.env.PORT || "8080";
  try {
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(4000) });
    process.exit(res.ok ? 0 : 1);
  } catch {
    process.exit(1);
  }
}
process.exit(running("roles/worker.ts") ? 0 : 1);

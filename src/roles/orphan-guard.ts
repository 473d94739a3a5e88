// A role started by the supervisor stops when the supervisor is gone (killed with SIGKILL, say),
// instead of running on as an orphan that nobody restarts or stops.
import { config } from "../config";

export function stopWhenOrphaned(shutdown: (reason: string) => void, everyMs = 1000): void {
  if (!config.workerName) return; // started by hand, not by the supervisor
  // The supervisor's pid as it passed it, not our parent when this runs: a role still starting
  // (a busy machine) when the supervisor is killed would take its new parent for the supervisor.
  const parent = config.supervisorPid ?? process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) shutdown("supervisor gone");
  }, everyMs);
  timer.unref();
}

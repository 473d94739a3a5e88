// A role started by the supervisor stops when the supervisor is gone (killed with SIGKILL, say),
// instead of running on as an orphan that nobody restarts or stops.
import { config } from "../config";

export function stopWhenOrphaned(shutdown: (reason: string) => void, everyMs = 1000): void {
  if (!config.workerName) return; // started by hand, not by the supervisor
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) shutdown("supervisor gone");
  }, everyMs);
  timer.unref();
}

// The worker loop: wait for work announced on the `jobs` channel and run it. Job claiming
// and execution arrive with the jobs module; until then the loop only listens.
import type { Sql } from "../db/client";

export interface WorkerLoop {
  stop(): Promise<void>;
}

export async function startWorkerLoop(sql: Sql): Promise<WorkerLoop> {
  const sub = await sql.listen("jobs", () => {});
  return {
    async stop() {
      await sub.unlisten();
    },
  };
}

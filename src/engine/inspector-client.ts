// The API side of the inspector (roles/inspector.ts): one long-lived child process, requests
// as JSON lines (ipc/line-rpc.ts), a timeout per request. A crash or timeout restarts the child
// and fails only the requests in flight.
import { join } from "node:path";
import { LineRpc } from "../ipc/line-rpc";
import { log } from "../log";
import type { Identified } from "./native";

const timeoutMs = 20_000;

type Answer = { id: number; result?: Identified; error?: string };

let child: LineRpc<Answer> | null = null;

function start(): LineRpc<Answer> {
  const rpc: LineRpc<Answer> = new LineRpc<Answer>({
    argv: ["bun", join(import.meta.dir, "../roles/inspector.ts")],
    exitError: () => new Error("inspector_crashed"),
    onExit: (code, signal, failed) => {
      if (child === rpc) child = null;
      if (failed) log.warn("inspector exited with requests in flight", { code, signal });
    },
    onMalformedLine: () => log.warn("inspector wrote a malformed line"),
  });
  child = rpc;
  return rpc;
}

/** Identifies the document at `path` in the inspector child. */
export async function inspect(path: string): Promise<Identified> {
  const rpc = child && !child.exited ? child : start();
  const answer = await rpc.request({ path }, timeoutMs, () => {
    // A stuck identification means hostile input: restart the child so it cannot pile up.
    rpc.kill();
    return new Error("inspector_timeout");
  });
  if (answer.result) return answer.result;
  throw new Error(answer.error ?? "inspector error");
}

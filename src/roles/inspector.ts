// The inspector: a child of the API process that identifies uploads with the native engine
// (type, page count, encryption). It exists so that the API process never runs native code:
// a hostile file can crash this child, which the API restarts, but never the API.
import { engine } from "../engine/native";

const decoder = new TextDecoder();
let pending = "";
const native = engine();

async function handle(line: string) {
  let id: number | undefined;
  try {
    const req = JSON.parse(line) as { id: number; path: string };
    id = req.id;
    const result = await native.identify(req.path);
    process.stdout.write(JSON.stringify({ id, result }) + "\n");
  } catch (e) {
    process.stdout.write(JSON.stringify({ id, error: String((e as Error)?.message ?? e) }) + "\n");
  }
}

for await (const chunk of Bun.stdin.stream()) {
  pending += decoder.decode(chunk as Uint8Array, { stream: true });
  let nl: number;
  while ((nl = pending.indexOf("\n")) >= 0) {
    const line = pending.slice(0, nl);
    pending = pending.slice(nl + 1);
    if (line.trim()) void handle(line);
  }
}

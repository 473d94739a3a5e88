// Rule (src/ipc/line-rpc.ts): a request is answered by the line with its id, whatever the order;
// a request past its timeout rejects with the caller's error; when the child exits, every request
// in flight fails with the exit error; lines that answer no request go to onOtherLine.
import { expect, test } from "bun:test";
import { LineRpc } from "../../src/ipc/line-rpc";

// Answers `{ id, echo }` after `delay` ms; "exit" ends the process; says hello first.
const child = `
console.log(JSON.stringify({ hello: true }));
for await (const line of console) {
  const req = JSON.parse(line);
  if (req.exit) process.exit(3);
  setTimeout(() => console.log(JSON.stringify({ id: req.id, echo: req.echo })), req.delay ?? 0);
}`;

function start(others: Record<string, unknown>[] = []) {
  return new LineRpc<{ id: number; echo: string }>({
    argv: [process.execPath, "-e", child],
    exitError: (code) => new Error(`exited ${code}`),
    onOtherLine: (m) => others.push(m),
  });
}

test("answers reach their requests by id, in any order, and other lines reach onOtherLine", async () => {
  const others: Record<string, unknown>[] = [];
  const rpc = start(others);
  const slow = rpc.request({ echo: "slow", delay: 200 }, 5000, () => new Error("timeout"));
  const fast = rpc.request({ echo: "fast" }, 5000, () => new Error("timeout"));
  expect((await fast).echo).toBe("fast");
  expect((await slow).echo).toBe("slow");
  expect(others).toEqual([{ hello: true }]);
  rpc.kill();
});

test("a request past its timeout rejects with the caller's error; the child's exit fails the others", async () => {
  const rpc = start();
  const late = rpc.request({ echo: "late", delay: 2000 }, 100, () => new Error("too slow"));
  await expect(late).rejects.toThrow("too slow");
  const waiting = rpc.request({ echo: "never", delay: 5000 }, 10_000, () => new Error("timeout"));
  void rpc.request({ exit: true }, 10_000, () => new Error("timeout")).catch(() => {});
  await expect(waiting).rejects.toThrow("exited 3");
  expect(rpc.exited).toBe(true);
  expect(rpc.pending).toBe(0);
});

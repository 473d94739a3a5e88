// Rule (the API spec (docs/api.md), States and transitions; issue #15): the job state machine is defined once, in
// domain/job-states.ts, and every SQL guard on a job's status is written out from that table.
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { activeStatuses, finalStatuses, jobStatuses, sourcesOf, transitions } from "../../src/domain/job-states";
import { canMoveTo, isActive, statusIn } from "../../src/queue/guards";

const root = resolve(import.meta.dir, "../..");

describe("the job state machine is one table that the SQL guards are generated from", () => {
  test("the table is the spec's: three final statuses, cancel and fail from queued or running, retry only from running", () => {
    expect(finalStatuses).toEqual(["succeeded", "failed", "cancelled"]);
    expect(activeStatuses).toEqual(["queued", "running"]);
    expect(sourcesOf("running")).toEqual(["queued"]);
    expect(sourcesOf("succeeded")).toEqual(["running"]);
    expect(sourcesOf("failed")).toEqual(["queued", "running"]);
    expect(sourcesOf("cancelled")).toEqual(["queued", "running"]);
    expect(sourcesOf("queued")).toEqual(["running"]);
    for (const s of jobStatuses) for (const t of transitions[s]) expect(jobStatuses).toContain(t);
  });

  test("guards are SQL lists of the table's statuses", () => {
    expect(canMoveTo("cancelled")).toBe("status IN ('queued', 'running')");
    expect(canMoveTo("running")).toBe("status IN ('queued')");
    expect(isActive).toBe("status IN ('queued', 'running')");
    expect(statusIn(["running"], "j.status")).toBe("j.status IN ('running')");
    expect(() => statusIn([])).toThrow();
  });

  test("no job query under src/queue or src/modules/jobs spells a status guard by hand", () => {
    const literal = /\bstatus\s*(=|IN\s*\()\s*'(queued|running|succeeded|failed|cancelled)'/;
    const offenders: string[] = [];
    for (const file of new Glob("src/{queue,modules/jobs}/**/*.ts").scanSync(root)) {
      readFileSync(resolve(root, file), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (literal.test(line)) offenders.push(`${file}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});

// What an operation executor receives and returns. Executors read inputs from disk, write
// their output into `workDir`, and report pages processed; the loop stores and settles.
import type { JobControl } from "../../engine/native";
import type { JobResult } from "../../queue/finish";

export interface ExecutionInput {
  jobId: string;
  operation: string;
  options: Record<string, any>;
  inputs: { id: string; path: string; kind: string; pageCount: number | null; filename: string }[];
  workDir: string;
  control: JobControl;
  mode: "live" | "test";
}

export interface ExecutionOutput {
  pagesProcessed: number;
  /** A file in workDir, or JSON. */
  result: { type: "file"; path: string; filename: string; contentType: string; note?: string } | { type: "json"; json: unknown };
}

export type Executor = (input: ExecutionInput) => Promise<ExecutionOutput>;
export type { JobResult };

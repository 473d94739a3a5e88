// What an operation executor receives and returns, typed per operation from the catalogue:
// `options` are the job's options with every default filled in (`OptionsOf<Op>`), the result is
// one the operation may produce (`ResultOf<Op>`). Executors read inputs from disk, write their
// output into `workDir`, and report pages processed; the loop stores and settles.
import type { JobControl } from "../../engine/native";
import type { OperationName, OptionsOf, ResultOf } from "../../domain/operations";

export interface InputOnDisk {
  id: string;
  path: string;
  kind: string;
  page_count: number | null;
  filename: string;
}

export interface ExecutionInput<Op extends OperationName = OperationName> {
  jobId: string;
  operation: Op;
  options: OptionsOf<Op>;
  inputs: InputOnDisk[];
  workDir: string;
  control: JobControl;
  mode: "live" | "test";
}

export interface ExecutionOutput<Op extends OperationName = OperationName> {
  pages_processed: number;
  /** A file in workDir (stored by the loop under the same field names), or JSON. */
  result: ResultOf<Op>;
}

export type Executor<Op extends OperationName> = (input: ExecutionInput<Op>) => Promise<ExecutionOutput<Op>>;

/** One executor for every operation of the catalogue: an operation without one does not compile. */
export type ExecutorMap = { [Op in OperationName]: Executor<Op> };

/** What one task of a page-parallel job (worker/fanout.ts) leaves: its partial result, a file
 * in workDir that the loop stores, and the facts of it the assembly needs. */
export interface TaskOutput {
  pages_processed: number;
  partialPath: string;
  summary: Record<string, number>;
}

/** A stored partial result, downloaded for the assembly, in page order. */
export interface PartialOnDisk {
  path: string;
  summary: Record<string, number>;
}

/** How a page-separable operation runs as tasks: `task` reads `pages` of the input, `assemble`
 * builds the job's result from every task's partial, as the whole job would have. */
export interface FanoutRunner<Op extends OperationName> {
  task(input: ExecutionInput<Op>, pages: number[]): Promise<TaskOutput>;
  assemble(input: ExecutionInput<Op>, partials: PartialOnDisk[]): Promise<ExecutionOutput<Op>>;
}

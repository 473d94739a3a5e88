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
  pageCount: number | null;
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
  pagesProcessed: number;
  /** A file in workDir (stored by the loop under the same field names), or JSON. */
  result: ResultOf<Op>;
}

export type Executor<Op extends OperationName> = (input: ExecutionInput<Op>) => Promise<ExecutionOutput<Op>>;

/** One executor for every operation of the catalogue: an operation without one does not compile. */
export type ExecutorMap = { [Op in OperationName]: Executor<Op> };

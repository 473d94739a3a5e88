// Which files of the evaluation set's report half a document suite runs on, and the line its
// report says about it. Goals are judged on the report half only (bench/README.md); without the
// set (scripts/fetch-eval.sh not run) the suite says so in its report and judges no goal.
import { evalFiles, evalSample, hasEvalSet, type EvalFile } from "./eval-set";

export interface ReportHalf {
  files: EvalFile[];
  /** Files in the whole report half. */
  total: number;
  missing: boolean;
  /** One line for the report: what was run, or that the set is missing. */
  line: string;
}

export const EVAL_MISSING =
  "**The evaluation set is not fetched (run `scripts/fetch-eval.sh`): its report half was skipped and no goal is judged in this section.**";

/** `quickN` files with `--quick`, `defaultN` by default (undefined: all), all with `--full`;
 * samples are the set's fixed hash-chosen ones, so every run sees the same files. */
export function reportHalf(opts: { quick: boolean; full: boolean; quickN: number; defaultN?: number }): ReportHalf {
  if (!hasEvalSet()) return { files: [], total: 0, missing: true, line: EVAL_MISSING };
  const all = evalFiles({ split: "report" });
  const n = opts.full ? undefined : opts.quick ? opts.quickN : opts.defaultN;
  const files = n !== undefined && n < all.length ? evalSample("report", n) : all;
  const line =
    files.length === all.length
      ? `Report half of the evaluation set (scripts/fetch-eval.sh, split in bench/eval-set.tsv): all ${all.length} files.`
      : `Report half of the evaluation set (scripts/fetch-eval.sh, split in bench/eval-set.tsv): a fixed sample of ${files.length} of its ${all.length} files${opts.quick ? " (`--quick`)" : " (`--full` runs all)"}.`;
  return { files, total: all.length, missing: false, line };
}

/** "met" / "missed" in bold, or "not judged" when the set is missing. */
export function verdict(ok: boolean, missing = false): string {
  return missing ? "**not judged** (evaluation set missing)" : ok ? "**met**" : "**missed**";
}

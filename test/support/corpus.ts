// Where the corpus is, and whether it is all there, by the same rules as the Rust tests'
// build scripts (crates/test_inputs.rs): CORPUS_DIR when set (relative to the repository root), else the first of <repo>/.corpus
// (scripts/fetch-corpus.sh puts it there) and ../shared/corpus beside the repository that holds
// files/. It is present when MANIFEST.tsv and every files/ entry of test/corpus-manifest.tsv
// are; tests that read it use test.skipIf(!hasCorpus), and test/support/corpus-note.ts says
// once why they skip.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");

function locate(): string {
  if (process.env.CORPUS_DIR) return resolve(root, process.env.CORPUS_DIR);
  const candidates = [join(root, ".corpus"), resolve(root, "../shared/corpus")];
  return candidates.find((d) => existsSync(join(d, "files"))) ?? candidates[0]!;
}

export const corpusDir = locate();

/** Paths (files/<name>, ocr/<name>, MANIFEST.tsv, ...) of test/corpus-manifest.tsv. */
export const corpusEntries: string[] = readFileSync(join(root, "test/corpus-manifest.tsv"), "utf8")
  .split("\n")
  .slice(1)
  .filter((l) => l.trim())
  .map((l) => l.split("\t")[0]!);

/** Whether the corpus is there: MANIFEST.tsv and every files/ entry of the manifest. */
export const hasCorpus =
  existsSync(join(corpusDir, "MANIFEST.tsv")) &&
  corpusEntries.filter((p) => p.startsWith("files/")).every((p) => existsSync(join(corpusDir, p)));

/** Names of the corpus's files/ entries ending in `ext`, sorted: the same list with or without
 * the corpus, so that a test made per file is reported as skipped rather than not made. */
export function corpusFileNames(ext: string): string[] {
  return corpusEntries
    .filter((p) => p.startsWith("files/") && p.endsWith(ext))
    .map((p) => p.slice("files/".length))
    .sort();
}

// Preloaded once per `bun test` run (bunfig.toml): says in one line why the corpus tests are
// skipped when the corpus is absent, instead of each test file repeating it.
import { corpusDir, hasCorpus } from "./corpus";

if (!hasCorpus) {
  console.log(
    `SKIP: corpus missing at ${corpusDir}: the tests that read corpus files are skipped (run scripts/fetch-corpus.sh or set CORPUS_DIR)`,
  );
}

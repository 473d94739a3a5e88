// Preloaded once per `bun test` run (bunfig.toml): says in one line that the corpus tests
// skip when the corpus is absent, instead of each test file repeating it.
import { corpusDir, hasCorpus } from "./service";

if (!hasCorpus) console.log(`SKIP: corpus not found at ${corpusDir} (set CORPUS_DIR): the tests that read corpus files are skipped`);

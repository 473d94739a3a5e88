//! The content guard run after every lossy run (`CompressOptions::guard_always`) must not
//! see a loss where there is none: the save renumbers objects (MuPDF names Type3 fonts
//! after their object number), merges duplicates and packs object streams.

mod common;

use common::{corpus_file, Scratch};
use engine::pagework::compress::{compress, CompressLevel, CompressOptions, CompressPath};
use engine::JobControl;

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn the_guard_passes_geotopos_own_pass_output_type3_fonts_included() {
    let input = corpus_file("geotopo-117-pages.pdf");
    let scratch = Scratch::new("guard-always");
    for level in [CompressLevel::Balanced, CompressLevel::Strong] {
        let out = scratch.path("out.pdf");
        let r = compress(
            &input,
            &out,
            &CompressOptions { level, guard_always: true, ..Default::default() },
            &JobControl::new(),
        )
        .unwrap();
        assert_eq!(r.path, CompressPath::Images, "{level:?}: {r:?}");
        assert!(!r.kept_original && r.output_bytes < r.input_bytes, "{level:?}: {r:?}");
    }
}

//! The content guard with MuPDF's image rewriter doing every image
//! (`ENGINE_COMPRESS_IMAGES=mupdf`, as before the engine had its own pass): on
//! geotopo-117-pages.pdf the rewriter drops a figure's fonts and patterns (page 40);
//! the guard must see it and fall back to the lossless path. A test binary of its own:
//! the variable is process-wide.

mod common;

use std::process::Command;

use common::{corpus_file, Scratch};
use engine::compress::{compress, CompressLevel, CompressOptions, CompressPath};
use engine::JobControl;

#[test]
fn geotopo_through_mupdfs_rewriter_alone_falls_back_and_keeps_page_40() {
    let Some(input) = corpus_file("geotopo-117-pages.pdf") else { return };
    std::env::set_var("ENGINE_COMPRESS_IMAGES", "mupdf");
    let scratch = Scratch::new("guard-geotopo");
    let out = scratch.path("out.pdf");
    let o = CompressOptions { level: CompressLevel::Balanced, max_pages: None };
    let r = compress(&input, &out, &o, &JobControl::new()).unwrap();
    assert_eq!(r.path, CompressPath::LosslessFallback, "{r:?}");
    assert_eq!(r.page_count, 117);
    let page40 = |p: &std::path::Path| {
        let o = Command::new("pdftotext").args(["-f", "40", "-l", "40"]).arg(p).arg("-").output().unwrap();
        (String::from_utf8_lossy(&o.stdout).split_whitespace().count(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (before, _) = page40(&input);
    let (after, errors) = page40(&out);
    assert_eq!(after, before);
    assert!(!errors.contains("Error"), "{errors}");
}

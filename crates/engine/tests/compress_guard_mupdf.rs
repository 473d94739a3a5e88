//! MuPDF's image rewriter doing every image (`CompressOptions::images`, as before the
//! engine had its own pass). Run on the document itself (`mupdf-inplace`, how it used to
//! run) it damages pdf20-utf8-test.pdf (font lost) and geotopo-117-pages.pdf (a
//! figure's fonts and patterns on page 40): the content guard must see both and fall
//! back to lossless. Run on its own opening (`mupdf`, the way it runs now) it keeps
//! both.

mod common;

use std::path::Path;

use common::{corpus_file, Scratch};
use engine::pagework::compress::{compress, CompressLevel, CompressOptions, CompressPath, CompressResult, ImagePass};
use engine::JobControl;

/// pdftotext's word count (of page `page` when set) and its error output.
fn words(path: &Path, page: Option<u32>) -> (usize, String) {
    let mut cmd = common::tool("pdftotext");
    if let Some(p) = page {
        cmd.args(["-f", &p.to_string(), "-l", &p.to_string()]);
    }
    let o = cmd.arg(path).arg("-").output().expect("pdftotext (poppler-utils)");
    (String::from_utf8_lossy(&o.stdout).split_whitespace().count(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn run(input: &Path, out: &Path, level: CompressLevel, images: ImagePass) -> CompressResult {
    compress(input, out, &CompressOptions { level, images, ..Default::default() }, &JobControl::new()).unwrap()
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn mupdfs_rewriter_damage_is_caught_in_place_and_avoided_on_its_own_opening() {
    let (pdf20, geotopo) = (corpus_file("pdf20-utf8-test.pdf"), corpus_file("geotopo-117-pages.pdf"));
    let scratch = Scratch::new("guard-mupdf");
    let out = scratch.path("out.pdf");
    let (pdf20_words, _) = words(&pdf20, None);
    let (page40_words, _) = words(&geotopo, Some(40));
    for (mode, path) in
        [(ImagePass::MupdfInPlace, CompressPath::LosslessFallback), (ImagePass::Mupdf, CompressPath::Images)]
    {
        let r = run(&pdf20, &out, CompressLevel::Strong, mode);
        assert_eq!(r.path, path, "{mode:?}: pdf20 {r:?}");
        let (w, errors) = words(&out, None);
        assert_eq!(w, pdf20_words, "{mode:?}: pdf20");
        assert!(!errors.contains("font"), "{mode:?}: {errors}");

        let r = run(&geotopo, &out, CompressLevel::Strong, mode);
        assert_eq!(r.path, path, "{mode:?}: geotopo {r:?}");
        assert_eq!(r.page_count, 117);
        let (w, errors) = words(&out, Some(40));
        assert_eq!(w, page40_words, "{mode:?}: geotopo page 40");
        assert!(!errors.contains("Error"), "{mode:?}: {errors}");
    }
}

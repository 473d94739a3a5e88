//! compress must not lose text: MuPDF's image rewriter, run on the document itself,
//! damaged pdf20-utf8-test.pdf (the page's font reference became null, so its text was
//! gone). It now runs on a second opening, and the content guard (src/pagework/compress/guard.rs,
//! its fallbacks tested in compress_guard_mupdf.rs) checks what comes out. Checked with
//! pdftotext (poppler), an independent reader.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{corpus_file, Scratch};
use engine::pagework::compress::{compress, CompressLevel, CompressOptions, CompressPath};
use engine::JobControl;
use mupdf::pdf::PdfDocument;

/// pdftotext's words of `path` with their counts, and its error output.
fn words(path: &Path) -> (HashMap<String, usize>, String) {
    let out = common::tool("pdftotext").arg(path).arg("-").output().expect("pdftotext (poppler-utils)");
    let mut m = HashMap::new();
    for w in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        *m.entry(w.to_owned()).or_insert(0) += 1;
    }
    (m, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// The words of `before` that `after` lacks (with multiplicity).
fn missing(before: &HashMap<String, usize>, after: &HashMap<String, usize>) -> Vec<String> {
    before.iter().filter(|(w, n)| after.get(*w).copied().unwrap_or(0) < **n).map(|(w, _)| w.clone()).collect()
}

/// The stored length of image XObject `name` on the first page.
fn image_length(path: &Path, name: &str) -> i32 {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let page = doc.find_page(0).unwrap();
    let xo = page.get_dict("Resources").unwrap().unwrap().get_dict("XObject").unwrap().unwrap();
    let im = xo.get_dict(name).unwrap().unwrap().resolve().unwrap().unwrap();
    im.get_dict("Length").unwrap().unwrap().as_int().unwrap()
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn pdf20_utf8_keeps_its_text_and_font_at_every_level() {
    let input = corpus_file("pdf20-utf8-test.pdf");
    let scratch = Scratch::new("guard-pdf20");
    let (before, _) = words(&input);
    assert!(before.len() >= 10, "the input has text: {before:?}");
    for (level, path) in [
        (CompressLevel::Light, CompressPath::Lossless),
        // Its one image has corrupt flate data, so the engine's pass leaves it to MuPDF's
        // rewriter, which lost the page's font when it ran on the document itself; on its
        // own opening (only the new image copied back) the output keeps it.
        (CompressLevel::Balanced, CompressPath::Images),
        (CompressLevel::Strong, CompressPath::Images),
    ] {
        let out = scratch.path(&format!("{level:?}.pdf"));
        let r = compress(&input, &out, &CompressOptions { level, ..Default::default() }, &JobControl::new()).unwrap();
        assert_eq!(r.page_count, 1);
        assert_eq!(r.path, path, "{level:?}: {r:?}");
        let (after, errors) = words(&out);
        assert_eq!(missing(&before, &after), Vec::<String>::new(), "{level:?}");
        assert!(!errors.contains("font"), "{level:?}: {errors}");
        // The damaged image's stored bytes are kept, not replaced by what MuPDF could
        // decode of them (nothing).
        if !r.kept_original {
            assert!(image_length(&out, "Im0") > 1000, "{level:?}");
        }
    }
}

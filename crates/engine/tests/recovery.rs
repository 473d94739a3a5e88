//! Damaged files: pages are recovered from the objects the file still holds, and a
//! page whose object is not in the file is not invented.

mod common;

use std::path::Path;

use common::{corpus_file, qpdf_pages, Scratch};
use engine::{identify, rotate, JobControl, RotateOptions};

fn rotate_all(input: &Path, out: &Path) -> engine::PageOpResult {
    let options = RotateOptions { degrees: 90, pages: None, max_pages: None };
    rotate(input, out, &options, &JobControl::new()).unwrap()
}

/// A PDF without an xref table whose catalog points at a page tree that does not
/// exist; its two page objects are still there.
fn broken_tree_pdf() -> Vec<u8> {
    let mut pdf = b"%PDF-1.4\n".to_vec();
    for (num, body) in [
        (1, "<< /Type /Catalog /Pages 9 0 R >>"),
        (2, "<< /Type /Page /MediaBox [0 0 200 100] /Contents 4 0 R >>"),
        (3, "<< /Type /Page /MediaBox [0 0 300 100] /Contents 4 0 R >>"),
        (4, "<< /Length 23 >>\nstream\n0 0 m 100 50 l S\n\nendstream"),
    ] {
        pdf.extend_from_slice(format!("{num} 0 obj\n{body}\nendobj\n").as_bytes());
    }
    pdf.extend_from_slice(b"trailer\n<< /Root 1 0 R >>\n%%EOF\n");
    pdf
}

#[test]
fn pages_of_a_missing_page_tree_are_recovered_by_a_scan_in_object_order() {
    let scratch = Scratch::new("recovery-scan");
    let input = scratch.path("broken.pdf");
    std::fs::write(&input, broken_tree_pdf()).unwrap();
    assert_eq!(identify(&input).unwrap().page_count, Some(2));
    let out = scratch.path("out.pdf");
    assert_eq!(rotate_all(&input, &out).page_count, 2);
    assert!(qpdf_pages(&out, None).is_none_or(|n| n == 2));
}

/// unreadable-metadata-images.pdf announces 4 pages (its linearization dictionary has
/// `/N 4`, which is what poppler's pdfinfo reports), but 1,122,166 bytes from offset
/// 1,695,609 are zeros: the end of page 3's objects, all of page 4's (its hint table
/// places page 4 at 2,137,481-2,777,957), the page tree root and the start of the
/// main xref table. Three page objects remain, so the document has three pages; a
/// fourth would have to be made up, size and all.
#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn a_page_whose_object_is_not_in_the_file_is_not_invented() {
    let input = corpus_file("unreadable-metadata-images.pdf");
    let bytes = std::fs::read(&input).unwrap();
    let zeros = &bytes[1_695_609..2_817_775];
    assert!(zeros.iter().all(|&b| b == 0), "the corpus file changed");
    let page_objects = bytes.windows(10).filter(|w| w == b"/Type/Page").count()
        - bytes.windows(11).filter(|w| w == b"/Type/Pages").count();
    assert_eq!(page_objects, 3);

    assert_eq!(identify(&input).unwrap().page_count, Some(3));
    let scratch = Scratch::new("recovery-zeroed");
    let out = scratch.path("out.pdf");
    assert_eq!(rotate_all(&input, &out).page_count, 3);
    assert!(qpdf_pages(&out, None).is_none_or(|n| n == 3));
}

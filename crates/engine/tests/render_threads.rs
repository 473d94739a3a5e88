//! Render threads open the document in MuPDF contexts of their own
//! (csrc/render_thread.c); what they produce must be exactly what one thread produces
//! with the mupdf crate's context, annotations and form widgets included.

mod common;

use common::{corpus_file, Scratch};
use engine::pagework::render::{render_jpeg, RenderOptions};
use engine::JobControl;

fn render(input: &std::path::Path, pages: Vec<i64>, threads: usize, out: &std::path::Path) -> Vec<u8> {
    let options = RenderOptions { dpi: Some(72), pages: Some(pages), threads: Some(threads), ..Default::default() };
    render_jpeg(input, out, &options, &JobControl::new()).expect("render");
    std::fs::read(out).expect("reading the output")
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn render_threads_write_the_same_zip_as_one_thread() {
    let s = Scratch::new("render-threads");
    // geotopo: vector figures, patterns and TeX fonts; the book: its cover image and
    // form widgets (MANIFEST: forms).
    for (file, pages) in
        [("geotopo-117-pages.pdf", (0..12).collect::<Vec<i64>>()), ("freeculture-book-352-pages.pdf", (0..8).collect())]
    {
        let input = corpus_file(file);
        let one = render(&input, pages.clone(), 1, &s.path("one.zip"));
        let three = render(&input, pages, 3, &s.path("three.zip"));
        assert!(one.len() > 10_000, "{file}: a ZIP of pages");
        assert!(one == three, "{file}: 3 threads wrote a different ZIP than 1 thread");
    }
}

/// MuPDF's JPEG 2000 decoder reaches its context through a global guarded by
/// FZ_LOCK_FREETYPE (csrc/locks.c): private contexts without a shared lock decoded two
/// pages at once through each other's context and crashed (segmentation fault) on every
/// run of this test before the lock was shared. Compress's content guard reads text on
/// threads of the mupdf crate while its own context works: the same lock covers both.
#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn jpeg2000_pages_render_on_two_threads_and_compress_beside_the_crate() {
    let jpx = corpus_file("scanned-jpeg2000-image.pdf");
    let s = Scratch::new("render-jpx");
    let many = s.path("jpx-8.pdf");
    engine::pdf::merge::merge(&vec![jpx.clone(); 8], &many, &JobControl::new()).expect("merge");
    for round in 0..5 {
        let zip = render(&many, (0..8).collect(), 2, &s.path("two.zip"));
        assert!(zip.len() > 10_000, "round {round}: a ZIP of pages");
        let out = s.path("jpx.pdf");
        let r = engine::pagework::compress::compress(
            &many,
            &out,
            &engine::pagework::compress::CompressOptions::default(),
            &JobControl::new(),
        )
        .expect("compress");
        assert_eq!(r.page_count, 8);
    }
}

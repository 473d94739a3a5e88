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
fn render_threads_write_the_same_zip_as_one_thread() {
    let s = Scratch::new("render-threads");
    // geotopo: vector figures, patterns and TeX fonts; the book: its cover image and
    // form widgets (MANIFEST: forms).
    for (file, pages) in
        [("geotopo-117-pages.pdf", (0..12).collect::<Vec<i64>>()), ("freeculture-book-352-pages.pdf", (0..8).collect())]
    {
        let Some(input) = corpus_file(file) else { return };
        let one = render(&input, pages.clone(), 1, &s.path("one.zip"));
        let three = render(&input, pages, 3, &s.path("three.zip"));
        assert!(one.len() > 10_000, "{file}: a ZIP of pages");
        assert!(one == three, "{file}: 3 threads wrote a different ZIP than 1 thread");
    }
}

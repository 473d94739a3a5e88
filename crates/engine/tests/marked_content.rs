//! A tagged page with thousands of marked-content sequences whose structure element lists
//! them as marked-content reference dictionaries (valid PDF, as PyMuPDF's test_5125.pdf
//! does): MuPDF's MCID lookups scan the whole ParentTree array for each sequence, which ran
//! for hours. Every operation that runs or filters page content finishes in seconds, and the
//! operations that save the document keep its structure.

mod common;

use std::path::Path;
use std::time::Duration;

use common::{build_pdf, guarded, stream, write, Scratch};
use engine::convert::docx::{pdf_to_docx, PdfToDocxOptions};
use engine::pagework::compress::{compress, CompressLevel, CompressOptions};
use engine::pagework::redact::{redact, RedactOptions, RedactRegion};
use engine::pagework::render::{render_jpeg, RenderOptions};
use engine::JobControl;

/// Sequences on the page: without the fix, about 2 x 3,000 lookups x 3,000 entries x 3,000
/// references each.
const SEQUENCES: usize = 3000;
const LIMIT: Duration = Duration::from_secs(60);

fn tagged_page_pdf() -> Vec<u8> {
    let mut content = String::new();
    for i in 0..SEQUENCES {
        let (x, y) = (20 + (i % 60) * 9, 800 - (i / 60) * 15);
        content.push_str(&format!("/P <</MCID {i}>> BDC BT /F1 8 Tf {x} {y} Td (o) Tj ET EMC\n"));
    }
    let mcrs: Vec<String> = (0..SEQUENCES).map(|i| format!("<< /Type /MCR /MCID {i} /Pg 3 0 R >>")).collect();
    let parents = vec!["6 0 R"; SEQUENCES].join(" ");
    build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R /StructTreeRoot 5 0 R /MarkInfo << /Marked true >> >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /StructParents 0 \
           /Resources << /Font << /F1 7 0 R >> >> /Contents 4 0 R >>"
            .to_vec(),
        stream("", content.as_bytes()),
        b"<< /Type /StructTreeRoot /K 6 0 R /ParentTree << /Nums [0 8 0 R] >> /ParentTreeNextKey 1 >>".to_vec(),
        format!("<< /Type /StructElem /S /P /P 5 0 R /Pg 3 0 R /K [{}] >>", mcrs.join(" ")).into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
        format!("[{parents}]").into_bytes(),
    ])
}

fn keeps_struct_parents(path: &Path) {
    let doc = common::open(path);
    let page = doc.find_page(0).unwrap();
    assert_eq!(page.get_dict("StructParents").unwrap().map(|o| o.as_int().unwrap()), Some(0), "{}", path.display());
}

#[test]
fn pages_with_thousands_of_mcr_tagged_sequences_render_in_seconds() {
    let s = Scratch::new("marked-content");
    let input = write(&s, "tagged.pdf", &tagged_page_pdf());
    let output = s.path("page.jpg");
    let r = guarded(LIMIT, move || render_jpeg(&input, &output, &RenderOptions::default(), &JobControl::new()));
    r.unwrap().unwrap();
}

#[test]
fn pages_with_thousands_of_mcr_tagged_sequences_compress_at_every_level_and_keep_their_structure() {
    let s = Scratch::new("marked-content");
    let input = write(&s, "tagged.pdf", &tagged_page_pdf());
    for level in [CompressLevel::Light, CompressLevel::Balanced, CompressLevel::Strong] {
        let (i, o) = (input.clone(), s.path(&format!("{level:?}.pdf")));
        let out = o.clone();
        let options = CompressOptions { level, ..Default::default() };
        let r = guarded(LIMIT, move || compress(&i, &o, &options, &JobControl::new()));
        let r = r.unwrap_or_else(|e| panic!("{level:?}: {e}")).unwrap();
        if !r.kept_original {
            keeps_struct_parents(&out);
        }
    }
}

#[test]
fn pages_with_thousands_of_mcr_tagged_sequences_convert_to_docx_with_their_text() {
    let s = Scratch::new("marked-content");
    let input = write(&s, "tagged.pdf", &tagged_page_pdf());
    let output = s.path("page.docx");
    let out = output.clone();
    let r = guarded(LIMIT, move || pdf_to_docx(&input, &out, &PdfToDocxOptions::default(), &JobControl::new()));
    r.unwrap().unwrap();
    let document = common::zip_entries(&output).into_iter().find(|(n, _)| n == "word/document.xml").unwrap().1;
    let letters = String::from_utf8_lossy(&document).matches('o').count();
    assert!(letters >= SEQUENCES, "{letters} letters o in word/document.xml, {SEQUENCES} drawn");
}

#[test]
fn pages_with_thousands_of_mcr_tagged_sequences_redact_in_seconds_and_keep_their_structure() {
    let s = Scratch::new("marked-content");
    let input = write(&s, "tagged.pdf", &tagged_page_pdf());
    let output = s.path("redacted.pdf");
    let out = output.clone();
    let options = RedactOptions {
        regions: vec![RedactRegion { page: 0, x: 0.0, y: 0.0, w: 100.0, h: 100.0 }],
        ..Default::default()
    };
    let r = guarded(LIMIT, move || redact(&input, &out, &options, &JobControl::new()));
    r.unwrap().unwrap();
    keeps_struct_parents(&output);
}

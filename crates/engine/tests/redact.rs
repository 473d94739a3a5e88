//! Redaction leaves nothing of a redacted page in the file: not its content streams,
//! images or forms (raw or decoded), not its annotations or form fields, not its words;
//! the other pages keep their content streams byte for byte; damaged inputs still give
//! valid outputs.

mod common;

use std::collections::{BTreeSet, HashSet};
use std::path::Path;

use common::{corpus_file, qpdf_check, qpdf_ok, qpdf_pages, Scratch};
use engine::pagework::redact::{redact, RedactOptions, RedactRegion};
use engine::JobControl;
use mupdf::pdf::{PdfDocument, PdfObject};

fn open(path: &Path) -> PdfDocument {
    PdfDocument::open(path.to_str().unwrap()).unwrap()
}

fn redact_page(input: &Path, out: &Path, page: i64) -> engine::PageOpResult {
    let region = RedactRegion { page, x: 10.0, y: 10.0, w: 50.0, h: 20.0 };
    let options = RedactOptions { regions: vec![region], dpi: Some(72), ..Default::default() };
    redact(input, out, &options, &JobControl::new()).unwrap()
}

/// Keys that lead from a page's objects back up to the document (the page tree, the
/// page an annotation sits on, link targets); not followed, so that "reachable from a
/// page" means the page's own content, resources and annotations.
const UPWARD: [&str; 5] = ["Parent", "P", "Dest", "A", "StructParent"];

/// Object numbers reachable from `obj`, without following [`UPWARD`] keys.
fn reachable(obj: &PdfObject, seen: &mut HashSet<i32>, depth: u32) {
    if depth > 64 {
        return;
    }
    if obj.is_indirect().unwrap() && !seen.insert(obj.as_indirect().unwrap()) {
        return;
    }
    if obj.is_array().unwrap() {
        for item in obj.array_iter().unwrap() {
            reachable(&item.unwrap(), seen, depth + 1);
        }
    } else if obj.is_dict().unwrap() {
        for i in 0..obj.dict_len().unwrap() as i32 {
            let key = obj.get_dict_key(i).unwrap().unwrap().as_name().unwrap();
            if UPWARD.iter().any(|k| k.as_bytes() == key.as_slice()) {
                continue;
            }
            if let Some(v) = obj.get_dict_val(i).unwrap() {
                reachable(&v, seen, depth + 1);
            }
        }
    }
}

/// Objects that only page `index` of `doc` reaches (its content streams, images,
/// forms, fonts of its own, annotations and their appearances).
fn objects_of_page_only(doc: &PdfDocument, index: i32) -> HashSet<i32> {
    let n = doc.page_count().unwrap();
    let mut own = HashSet::new();
    reachable(&doc.find_page(index).unwrap(), &mut own, 0);
    let mut others = HashSet::new();
    for i in (0..n).filter(|&i| i != index) {
        reachable(&doc.find_page(i).unwrap(), &mut others, 0);
    }
    own.retain(|num| !others.contains(num));
    own
}

/// Whether object `num` is a stream (MuPDF answers that for references, not for the
/// loaded dictionary).
fn is_stream(doc: &PdfDocument, num: i32) -> bool {
    doc.new_indirect(num, 0).is_ok_and(|r| r.is_stream().unwrap_or(false))
}

/// Every stream of `doc`, decoded (streams MuPDF cannot decode are left out).
fn decoded_streams(doc: &PdfDocument) -> Vec<Vec<u8>> {
    (1..doc.xref_len().unwrap() as i32)
        .filter(|&num| is_stream(doc, num))
        .filter_map(|num| doc.xref_stream(num).ok())
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn pdftotext(path: &Path, page: Option<u32>) -> String {
    let mut cmd = common::tool("pdftotext");
    cmd.arg("-q");
    if let Some(p) = page {
        cmd.args(["-f", &p.to_string(), "-l", &p.to_string()]);
    }
    let out = cmd.arg(path).arg("-").output().unwrap();
    assert!(out.status.success(), "pdftotext {} failed", path.display());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() >= 4).map(str::to_owned).collect()
}

/// Redacts page `index` and checks that none of the streams only that page used
/// survives, raw (in the file's bytes) or decoded (in any stream of the output).
fn assert_page_streams_gone(name: &str, index: i32) {
    let input = corpus_file(name);
    let scratch = Scratch::new("redact-streams");
    let out = scratch.path("out.pdf");
    redact_page(&input, &out, index as i64);

    let before = open(&input);
    let own = objects_of_page_only(&before, index);
    let own_streams: Vec<i32> = own.iter().copied().filter(|&num| is_stream(&before, num)).collect();
    assert!(!own_streams.is_empty(), "{name}: page {index} has streams of its own");

    let out_bytes = std::fs::read(&out).unwrap();
    let out_streams = decoded_streams(&open(&out));
    for num in own_streams {
        let raw = before.xref_raw_stream(num).unwrap();
        // Short streams (a `q Q`, an empty form) can legitimately occur anywhere.
        if raw.len() >= 48 {
            assert!(!contains(&out_bytes, &raw), "{name}: raw bytes of object {num} survive");
        }
        let decoded = before.xref_stream(num).unwrap();
        if decoded.len() >= 48 {
            assert!(!out_streams.iter().any(|s| s == &decoded), "{name}: decoded content of object {num} survives");
        }
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn the_content_streams_of_a_redacted_text_page_are_gone_raw_and_decoded() {
    assert_page_streams_gone("latex-outline-4-pages.pdf", 1);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn the_images_only_a_redacted_scanned_page_used_are_gone_raw_and_decoded() {
    assert_page_streams_gone("scanned-multipage-assembly.pdf", 1);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn pdftotext_finds_none_of_the_words_only_the_redacted_page_had() {
    let input = corpus_file("latex-multicolumn.pdf");
    let page2 = pdftotext(&input, Some(2));
    let mut only_page2 = words(&page2);
    for p in [1, 3] {
        for w in words(&pdftotext(&input, Some(p))) {
            only_page2.remove(&w);
        }
    }
    assert!(only_page2.len() >= 10, "page 2 has words of its own: {only_page2:?}");
    let scratch = Scratch::new("redact-words");
    let out = scratch.path("out.pdf");
    redact_page(&input, &out, 1);
    let left = words(&pdftotext(&out, None));
    let found: Vec<_> = only_page2.intersection(&left).collect();
    assert!(found.is_empty(), "redacted words still in the output: {found:?}");
    assert_eq!(pdftotext(&out, Some(2)).trim(), "");
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn a_redacted_pages_annotations_and_form_fields_are_gone() {
    let input = corpus_file("libreoffice-form-fields.pdf");
    let before = open(&input);
    let field_strings = |doc: &PdfDocument| -> (usize, BTreeSet<Vec<u8>>) {
        let (mut widgets, mut strings) = (0, BTreeSet::new());
        for num in 1..doc.xref_len().unwrap() as i32 {
            let Ok(Some(obj)) = doc.xref_object(num) else {
                continue;
            };
            if !obj.is_dict().unwrap() {
                continue;
            }
            let subtype = obj.get_dict("Subtype").unwrap().and_then(|s| s.as_name().ok());
            widgets += usize::from(subtype.as_deref() == Some(b"Widget".as_slice()));
            for key in ["T", "V", "TU"] {
                if let Some(v) = obj.get_dict(key).unwrap().filter(|v| v.is_string().unwrap()) {
                    let bytes = v.as_bytes().unwrap();
                    if bytes.len() > 2 {
                        strings.insert(bytes);
                    }
                }
            }
        }
        (widgets, strings)
    };
    let (widgets_before, strings_before) = field_strings(&before);
    assert!(widgets_before > 0 && !strings_before.is_empty());

    let scratch = Scratch::new("redact-fields");
    let out = scratch.path("out.pdf");
    redact_page(&input, &out, 0);
    let after = open(&out);
    let (widgets_after, strings_after) = field_strings(&after);
    assert_eq!(widgets_after, 0, "widget annotations survive");
    let kept: Vec<_> = strings_before.intersection(&strings_after).collect();
    assert!(kept.is_empty(), "field names or values survive: {kept:?}");
    let page = after.find_page(0).unwrap();
    assert!(page.get_dict("Annots").unwrap().is_none());
    let fields = after.catalog().unwrap().get_dict("AcroForm").unwrap().and_then(|f| f.get_dict("Fields").unwrap());
    assert!(fields.map_or(0, |f| f.len().unwrap()) == 0, "AcroForm still lists fields");
    assert!(qpdf_ok(qpdf_check(&out, None)));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn pages_not_redacted_keep_their_content_streams_byte_for_byte() {
    let input = corpus_file("latex-outline-4-pages.pdf");
    let scratch = Scratch::new("redact-untouched");
    let out = scratch.path("out.pdf");
    let result = redact_page(&input, &out, 1);
    assert_eq!((result.pages_processed, result.page_count), (1, 4));
    let (before, after) = (open(&input), open(&out));
    let raw_contents = |doc: &PdfDocument, i: i32| -> Vec<u8> {
        let contents = doc.find_page(i).unwrap().get_dict("Contents").unwrap().unwrap();
        if contents.is_array().unwrap() {
            contents.array_iter().unwrap().flat_map(|s| s.unwrap().read_raw_stream().unwrap()).collect()
        } else {
            contents.read_raw_stream().unwrap()
        }
    };
    for i in [0, 2, 3] {
        assert_eq!(raw_contents(&before, i), raw_contents(&after, i), "page {i}");
    }
    assert_ne!(raw_contents(&before, 1), raw_contents(&after, 1));
    assert_eq!(qpdf_check(&out, None), 0);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn a_damaged_file_gives_a_valid_output_with_every_page_repaired() {
    // MuPDF repairs this file's xref; 14 of its 16 pages have truncated content
    // streams, which must not reach the output as they are.
    let input = corpus_file("fuzzed-poppler-16-pages.pdf");
    let scratch = Scratch::new("redact-damaged");
    let out = scratch.path("out.pdf");
    let result = redact_page(&input, &out, 0);
    assert_eq!(result.page_count, 16);
    let code = qpdf_check(&out, None);
    assert!(qpdf_ok(code), "qpdf --check exit {code:?}");
    assert!(qpdf_pages(&out, None).is_none_or(|n| n == 16));
}

/// A PDF with a correct xref table made of `objects` (numbered from 1).
fn build_pdf(objects: &[&str]) -> Vec<u8> {
    let mut pdf = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n{body}\nendobj\n", i + 1).as_bytes());
    }
    let xref = pdf.len();
    pdf.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        pdf.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    pdf
}

#[test]
fn a_field_value_kept_by_the_calculation_order_goes_and_a_shared_content_stream_stays() {
    let content = "BT /F1 12 Tf 20 150 Td (Shared text on both pages) Tj ET";
    let stream = format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len());
    let page = |annots: &str| {
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R \
             /Resources << /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >> {annots} >>"
        )
    };
    let pdf = build_pdf(&[
        "<< /Type /Catalog /Pages 2 0 R /AcroForm 6 0 R >>",
        "<< /Type /Pages /Kids [3 0 R 7 0 R] /Count 2 >>",
        &page("/Annots [5 0 R]"),
        &stream,
        "<< /Type /Annot /Subtype /Widget /Rect [10 10 100 30] /Parent 8 0 R /P 3 0 R >>",
        "<< /Fields [8 0 R] /CO [8 0 R] >>",
        &page(""),
        "<< /FT /Tx /T (SecretFieldName) /V (TopSecretValue) /Kids [5 0 R] >>",
    ]);
    let scratch = Scratch::new("redact-co");
    let input = scratch.path("in.pdf");
    std::fs::write(&input, &pdf).unwrap();
    let out = scratch.path("out.pdf");
    redact_page(&input, &out, 0);

    let after = open(&out);
    for num in 1..after.xref_len().unwrap() as i32 {
        let Ok(Some(obj)) = after.xref_object(num) else {
            continue;
        };
        if !obj.is_dict().unwrap() {
            continue;
        }
        for key in ["T", "V"] {
            if let Some(v) = obj.get_dict(key).unwrap().filter(|v| v.is_string().unwrap()) {
                panic!("object {num} still has /{key} {:?}", v.as_bytes().unwrap());
            }
        }
    }
    // Page 2 shows the same content stream, which therefore stays, byte for byte.
    let contents = after.find_page(1).unwrap().get_dict("Contents").unwrap().unwrap();
    assert_eq!(contents.read_stream().unwrap(), content.as_bytes());
    assert!(pdftotext(&out, Some(2)).contains("Shared text"));
    assert_eq!(qpdf_check(&out, None), 0);
}

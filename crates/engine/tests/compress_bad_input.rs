//! compress on bad and heavy input (issue 14): a font MuPDF cannot parse, a broken object
//! stream, encrypted input, fonts shared across hundreds of pages (a 352-page book). At
//! every level: never a crash, never a larger file than the input, never a lost page or
//! word (pdftotext, an independent reader, on the input as given).

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{build_pdf, corpus_file, Scratch};
use engine::pagework::compress::{compress, CompressLevel, CompressOptions};
use engine::{ErrorCode, JobControl};
use mupdf::pdf::PdfDocument;
use mupdf::Buffer;

const LEVELS: [CompressLevel; 3] = [CompressLevel::Light, CompressLevel::Balanced, CompressLevel::Strong];

fn words(path: &Path) -> HashMap<String, usize> {
    let out = common::tool("pdftotext").arg(path).arg("-").output().expect("pdftotext (poppler-utils)");
    let mut m = HashMap::new();
    for w in String::from_utf8_lossy(&out.stdout).split_whitespace() {
        *m.entry(w.to_owned()).or_insert(0) += 1;
    }
    m
}

fn pages(path: &Path) -> i32 {
    PdfDocument::open(path.to_str().unwrap()).unwrap().page_count().unwrap()
}

/// Compresses `input` at every level and checks the output against the input: not
/// larger, same page count, every pdftotext word kept as often.
fn check_every_level(input: &Path, s: &Scratch) {
    let (in_bytes, in_pages, in_words) = (std::fs::metadata(input).unwrap().len(), pages(input), words(input));
    let mut previous = u64::MAX;
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        let r = compress(
            input,
            &out,
            &CompressOptions { level, max_pages: None, ..Default::default() },
            &JobControl::new(),
        )
        .unwrap_or_else(|e| panic!("{} at {level:?}: {e:?}", input.display()));
        let bytes = std::fs::metadata(&out).unwrap().len();
        assert_eq!(bytes, r.output_bytes);
        assert!(bytes <= in_bytes, "{} at {level:?}: {bytes} > input {in_bytes}", input.display());
        assert!(bytes <= previous, "{} at {level:?}: larger than the level before", input.display());
        previous = bytes;
        assert_eq!(pages(&out), in_pages, "{} at {level:?}: pages", input.display());
        let got = words(&out);
        for (w, n) in &in_words {
            let have = got.get(w).copied().unwrap_or(0);
            assert!(have >= *n, "{} at {level:?}: word {w:?} {have} < {n} times", input.display());
        }
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn a_font_mupdf_cannot_parse_is_copied_and_no_word_is_lost() {
    let src = corpus_file("chinese-template.pdf");
    let s = Scratch::new("bad-font");
    let input = s.path("broken-font.pdf");
    let doc = PdfDocument::open(src.to_str().unwrap()).unwrap();
    let mut broken = 0;
    for num in 1..doc.xref_len().unwrap() as i32 {
        let Ok(Some(obj)) = doc.xref_object(num) else { continue };
        if !obj.is_dict().unwrap_or(false) {
            continue;
        }
        for key in ["FontFile", "FontFile2", "FontFile3"] {
            if let Some(mut program) = obj.get_dict(key).unwrap() {
                // Garbage where the font program was: no font parser can read it.
                let junk = Buffer::from_bytes(&b"not a font program "[..].repeat(64)).unwrap();
                program.write_stream_buffer(&junk).unwrap();
                broken += 1;
            }
        }
    }
    assert!(broken > 0, "the input embeds fonts");
    doc.save(input.to_str().unwrap()).unwrap();
    check_every_level(&input, &s);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn a_broken_object_stream_never_crashes_grows_or_loses_a_readable_word() {
    let src = corpus_file("geotopo-117-pages.pdf");
    let s = Scratch::new("bad-objstm");
    let packed = s.path("packed.pdf");
    let st = common::tool("qpdf").args(["--object-streams=generate"]).arg(&src).arg(&packed).status().unwrap();
    assert!(st.success());
    let mut bytes = std::fs::read(&packed).unwrap();
    // Zeros in the middle of the last object stream's deflated data: its objects cannot
    // be read (the first one holds the catalogue, and without it no reader finds a page).
    let at = bytes.windows(7).rposition(|w| w == b"/ObjStm").expect("an object stream");
    let data = at + bytes[at..].windows(7).position(|w| w == b"stream\n").unwrap() + 7;
    for b in &mut bytes[data + 40..data + 90] {
        *b = 0;
    }
    let input = s.path("broken-objstm.pdf");
    std::fs::write(&input, &bytes).unwrap();
    check_every_level(&input, &s);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn owner_password_input_compresses_at_every_level_and_user_password_input_is_refused() {
    let owner = corpus_file("owner-password-aes-30-pages.pdf");
    let s = Scratch::new("bad-encrypted");
    check_every_level(&owner, &s);
    let out = s.path("Light.pdf");
    let d = PdfDocument::open(out.to_str().unwrap()).unwrap();
    assert!(d.trailer().unwrap().get_dict("Encrypt").unwrap().is_some(), "stays encrypted");
    let user = corpus_file("encrypted-libreoffice-rc4.pdf");
    let err = compress(
        &user,
        &s.path("u.pdf"),
        &CompressOptions { level: CompressLevel::Light, max_pages: None, ..Default::default() },
        &JobControl::new(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::EncryptedInput);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn a_book_with_fonts_shared_across_352_pages_keeps_every_word_at_every_level() {
    let book = corpus_file("freeculture-book-352-pages.pdf");
    let s = Scratch::new("bad-book");
    check_every_level(&book, &s);
}

/// A one-page PDF (Helvetica) whose page content is `content`.
fn pdf_with_content(content: &[u8]) -> Vec<u8> {
    let objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
            .to_vec(),
        [format!("<< /Length {} >>\nstream\n", content.len()).as_bytes(), content, b"\nendstream"].concat(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ];
    build_pdf(&objects)
}

fn page_content(path: &Path) -> Vec<u8> {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let page = doc.find_page(0).unwrap();
    let contents = page.get_dict("Contents").unwrap().unwrap();
    let streams = if contents.is_array().unwrap() {
        (0..contents.len().unwrap() as i32).map(|i| contents.get_array(i).unwrap().unwrap()).collect()
    } else {
        vec![contents]
    };
    streams.iter().flat_map(|s| s.read_stream().unwrap()).collect()
}

#[test]
fn a_garbage_keyword_in_page_content_is_dropped_and_the_text_around_it_kept() {
    let s = Scratch::new("garbage-keyword");
    let input = s.path("garbage.pdf");
    let content = b"BT /F1 24 Tf 72 700 Td (Before) Tj ET\nxyzzy )garbage\nBT /F1 24 Tf 72 600 Td (After) Tj ET";
    std::fs::write(&input, pdf_with_content(content)).unwrap();
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        compress(&input, &out, &CompressOptions { level, ..Default::default() }, &JobControl::new()).unwrap();
        let rewritten = page_content(&out);
        let text = String::from_utf8_lossy(&rewritten);
        assert!(!text.contains("xyzzy") && !text.contains("garbage"), "{level:?}: damage kept: {text}");
        let got = words(&out);
        assert!(got.contains_key("Before") && got.contains_key("After"), "{level:?}: words {got:?}");
    }
}

#[test]
fn well_formed_page_content_is_not_rewritten() {
    let s = Scratch::new("well-formed-content");
    let input = s.path("clean.pdf");
    // Unusual but valid: a marked-content property list, a compatibility section with
    // an unknown operator, an inline image, a comment.
    // Repeated so that deflating it makes the file smaller (the output is not the input).
    let content = b"/P <</MCID 0>> BDC BT /F1 24 Tf 72 700 Td (Kept) Tj ET EMC\nBX 1 2 unknownop EX % note\n\
        q 10 0 0 10 72 500 cm BI /W 2 /H 1 /BPC 8 /CS /G ID \x00\xff EI Q\n"
        .repeat(50);
    std::fs::write(&input, pdf_with_content(&content)).unwrap();
    let out = s.path("light.pdf");
    let options = CompressOptions { level: CompressLevel::Light, ..Default::default() };
    let r = compress(&input, &out, &options, &JobControl::new()).unwrap();
    assert!(!r.kept_original, "the input was copied, so nothing was checked");
    assert!(String::from_utf8_lossy(&page_content(&out)).contains("unknownop"), "the page was rewritten");
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn fuzzed_content_syntax_is_rewritten_so_pdftotext_reads_what_mupdf_reads() {
    let input = corpus_file("fuzzed-poppler-16-pages.pdf");
    let s = Scratch::new("fuzzed-syntax");
    let before: usize = words(&input).values().sum();
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        compress(&input, &out, &CompressOptions { level, ..Default::default() }, &JobControl::new()).unwrap();
        let after: usize = words(&out).values().sum();
        // Measured: pdftotext reads 6 words of the input and 185 of the output.
        assert!(after >= 150 && after > before * 10, "{level:?}: {after} words read back (input {before})");
    }
}

/// Names of the fonts in page `index`'s resources.
fn font_names(path: &Path, index: i32) -> Vec<String> {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let page = doc.find_page(index).unwrap();
    let Some(fonts) = page.get_dict_inheritable("Resources").unwrap().and_then(|r| r.get_dict("Font").unwrap()) else {
        return Vec::new();
    };
    let mut names: Vec<String> = fonts
        .dict_iter()
        .unwrap()
        .map(|e| String::from_utf8_lossy(&e.unwrap().0.as_name().unwrap()).into_owned())
        .collect();
    names.sort();
    names
}

/// The grey pixels of every page of `path` at 72 dpi.
fn pixels(path: &Path) -> Vec<Vec<u8>> {
    use mupdf::{Colorspace, Document, Matrix};
    let doc = Document::open(path.to_str().unwrap()).unwrap();
    (0..doc.page_count().unwrap())
        .map(|i| {
            let page = doc.load_page(i).unwrap();
            page.to_pixmap(&Matrix::IDENTITY, &Colorspace::device_gray(), false, false).unwrap().samples().to_vec()
        })
        .collect()
}

#[test]
fn a_page_cut_short_at_damaged_data_keeps_only_the_resources_its_remaining_content_names() {
    use std::io::Write;
    let s = Scratch::new("truncated-resources");
    // Page 1: deflated content whose data is cut off before the part that uses F2 (the
    // filler, pseudo-random comments, keeps the deflated bytes proportional to the text).
    let mut content = b"BT /F1 24 Tf 72 700 Td (Before) Tj ET\n".to_vec();
    let mut x: u32 = 1;
    for _ in 0..200 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
        content.extend_from_slice(format!("% {:08x}{:08x}\n", x, x.rotate_left(13)).as_bytes());
    }
    content.extend_from_slice(b"BT /F2 24 Tf 72 600 Td (Lost) Tj ET\n");
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    z.write_all(&content).unwrap();
    let deflated = z.finish().unwrap();
    let cut = &deflated[..deflated.len() / 2];
    // Page 2 shares the resources (one dictionary) and uses F2: it must keep it.
    let second = b"BT /F2 24 Tf 72 700 Td (Second) Tj ET";
    let objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 7 0 R /Contents 5 0 R >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 7 0 R /Contents 6 0 R >>".to_vec(),
        [format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", cut.len()).as_bytes(), cut, b"\nendstream"]
            .concat(),
        [format!("<< /Length {} >>\nstream\n", second.len()).as_bytes(), &second[..], b"\nendstream"].concat(),
        b"<< /Font << /F1 8 0 R /F2 9 0 R >> >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Times-Roman >>".to_vec(),
    ];
    let input = s.path("truncated.pdf");
    std::fs::write(&input, build_pdf(&objects)).unwrap();
    assert_eq!(font_names(&input, 0), ["F1", "F2"]);
    let before = pixels(&input);
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        compress(&input, &out, &CompressOptions { level, ..Default::default() }, &JobControl::new()).unwrap();
        assert_eq!(font_names(&out, 0), ["F1"], "{level:?}: page 1 names only F1 now");
        assert_eq!(font_names(&out, 1), ["F1", "F2"], "{level:?}: page 2's shared resources are untouched");
        let got = words(&out);
        assert!(got.contains_key("Before") && got.contains_key("Second"), "{level:?}: words {got:?}");
        assert_eq!(pixels(&out), before, "{level:?}: the pages render as before");
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn a_fuzzed_file_drops_the_fonts_its_damaged_pages_no_longer_name() {
    let input = corpus_file("fuzzed-poppler-16-pages.pdf");
    let s = Scratch::new("fuzzed-resources");
    let before = pixels(&input);
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        let r = compress(&input, &out, &CompressOptions { level, ..Default::default() }, &JobControl::new()).unwrap();
        // Measured: 4,704 bytes (57,735 while the 23 fonts no remaining operator names
        // were kept; Ghostscript /ebook writes 10,207).
        assert!(r.output_bytes < 8_000, "{level:?}: {} bytes", r.output_bytes);
        assert_eq!(pixels(&out), before, "{level:?}: the pages render as before");
    }
}

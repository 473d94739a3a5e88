//! compress on bad and heavy input (issue 14): a font MuPDF cannot parse, a broken object
//! stream, encrypted input, fonts shared across hundreds of pages (a 352-page book). At
//! every level: never a crash, never a larger file than the input, never a lost page or
//! word (pdftotext, an independent reader, on the input as given).

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use common::{corpus_file, Scratch};
use engine::pagework::compress::{compress, CompressLevel, CompressOptions};
use engine::{ErrorCode, JobControl};
use mupdf::pdf::PdfDocument;
use mupdf::Buffer;

const LEVELS: [CompressLevel; 3] = [CompressLevel::Light, CompressLevel::Balanced, CompressLevel::Strong];

fn words(path: &Path) -> HashMap<String, usize> {
    let out = Command::new("pdftotext").arg(path).arg("-").output().expect("pdftotext (poppler-utils)");
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
fn a_font_mupdf_cannot_parse_is_copied_and_no_word_is_lost() {
    let Some(src) = corpus_file("chinese-template.pdf") else { return };
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
fn a_broken_object_stream_never_crashes_grows_or_loses_a_readable_word() {
    let Some(src) = corpus_file("geotopo-117-pages.pdf") else { return };
    if !common::qpdf_available() {
        return;
    }
    let s = Scratch::new("bad-objstm");
    let packed = s.path("packed.pdf");
    let st = Command::new("qpdf").args(["--object-streams=generate"]).arg(&src).arg(&packed).status().unwrap();
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
fn owner_password_input_compresses_at_every_level_and_user_password_input_is_refused() {
    let Some(owner) = corpus_file("owner-password-aes-30-pages.pdf") else { return };
    let s = Scratch::new("bad-encrypted");
    check_every_level(&owner, &s);
    let out = s.path("Light.pdf");
    let d = PdfDocument::open(out.to_str().unwrap()).unwrap();
    assert!(d.trailer().unwrap().get_dict("Encrypt").unwrap().is_some(), "stays encrypted");
    let Some(user) = corpus_file("encrypted-libreoffice-rc4.pdf") else { return };
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
fn a_book_with_fonts_shared_across_352_pages_keeps_every_word_at_every_level() {
    let Some(book) = corpus_file("freeculture-book-352-pages.pdf") else { return };
    let s = Scratch::new("bad-book");
    check_every_level(&book, &s);
}

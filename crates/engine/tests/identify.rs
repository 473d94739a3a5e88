//! identify() on representative corpus files and on small inputs built here: kind, page
//! count and encryption come from the bytes, following the rules documented in
//! `engine::identify`.

mod common;

use common::{corpus_file, synthetic_pdf, write, Scratch};
use engine::{identify, ErrorCode, Kind};

fn id(name: &str) -> engine::Identification {
    identify(&corpus_file(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn pdf_is_recognised_with_its_page_count() {
    let r = id("latex-outline-4-pages.pdf");
    assert_eq!((r.kind, r.page_count, r.encrypted, r.error), (Kind::Pdf, Some(4), false, None));
    let r = id("freeculture-book-352-pages.pdf");
    assert_eq!(r.page_count, Some(352));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn pdf_header_may_start_after_leading_text() {
    let r = id("pdf20-offset-start.pdf");
    assert_eq!((r.kind, r.page_count, r.error), (Kind::Pdf, Some(1), None));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn header_only_pdf_is_kind_pdf_with_invalid_pdf_error() {
    let r = id("malformed-header-only.pdf");
    assert_eq!((r.kind, r.page_count, r.error), (Kind::Pdf, None, Some(ErrorCode::InvalidPdf)));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn user_password_pdf_is_encrypted_and_still_counted() {
    let r = id("encrypted-libreoffice-rc4.pdf");
    assert_eq!((r.kind, r.encrypted, r.password_required, r.error), (Kind::Pdf, true, true, None));
    let r = id("encrypted-aes256-unicode-password.pdf");
    assert!(r.encrypted && r.password_required);
    // The page tree is not encrypted, so MuPDF can count without the password.
    assert!(r.page_count.is_none() || r.page_count == Some(1));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn owner_password_only_pdf_is_encrypted_but_needs_no_password() {
    let r = id("owner-password-aes-30-pages.pdf");
    assert_eq!((r.kind, r.page_count, r.encrypted, r.password_required), (Kind::Pdf, Some(30), true, false));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn images_are_one_page_by_magic_bytes() {
    for (name, kind) in [
        ("photo-exif-420dpi.jpg", Kind::Jpeg),
        ("map-multilingual-cmyk.jpg", Kind::Jpeg),
        ("typewriter-text.png", Kind::Png),
        ("webp-lossy.webp", Kind::Webp),
        ("webp-alpha.webp", Kind::Webp),
    ] {
        let r = id(name);
        assert_eq!((r.kind, r.page_count), (kind, Some(1)), "{name}");
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn tiff_is_unknown() {
    let r = id("deslant-scan.tif");
    assert_eq!((r.kind, r.page_count), (Kind::Unknown, None));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn docx_page_count_comes_from_app_xml_pages_else_one() {
    for name in ["docx-tables.docx", "docx-empty.docx", "docx-strict-ooxml.docx", "docx-with-images.docx"] {
        let r = id(name);
        assert_eq!(r.kind, Kind::Docx, "{name}");
        assert!(r.page_count.unwrap() >= 1, "{name}");
    }
    assert_eq!(id("docx-tables.docx").page_count, Some(1));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn xlsx_page_count_is_the_number_of_sheets() {
    let r = id("xlsx-strict-ooxml.xlsx");
    assert_eq!((r.kind, r.page_count), (Kind::Xlsx, Some(1)));
    let r = id("xlsx-pivot-tables.xlsx");
    assert_eq!(r.kind, Kind::Xlsx);
    assert!(r.page_count.unwrap() > 1, "pivot workbook has several sheets: {r:?}");
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn office_encrypted_package_is_encrypted_xlsx() {
    let r = id("xlsx-password-protected.xlsx");
    assert_eq!((r.kind, r.page_count, r.encrypted, r.password_required), (Kind::Xlsx, None, true, true));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn csv_page_count_is_non_blank_lines_per_50_rounded_up() {
    for name in ["country-codes-utf8.csv", "unsd-regions-chinese.csv", "gdp-by-country.csv"] {
        let path = corpus_file(name);
        let r = identify(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count() as u32;
        assert_eq!((r.kind, r.page_count), (Kind::Csv, Some(lines.div_ceil(50).max(1))), "{name}");
    }
}

/// The rules above on inputs built here, so that they are checked without the corpus too.
#[test]
fn built_inputs_follow_the_same_rules() {
    let s = Scratch::new("identify-built");
    let pdf = synthetic_pdf(&[(612, 792, 0); 3], false);
    let r = identify(&write(&s, "three.pdf", &pdf)).unwrap();
    assert_eq!((r.kind, r.page_count, r.encrypted, r.error), (Kind::Pdf, Some(3), false, None));
    // Text before the header, as PDF 2.0 allows.
    let offset = [b"# a line of text before the header\r\n".as_slice(), &pdf].concat();
    let r = identify(&write(&s, "offset.pdf", &offset)).unwrap();
    assert_eq!((r.kind, r.page_count, r.error), (Kind::Pdf, Some(3), None));
    let header_only = b"%PDF-1.3\nThis is not a valid PDF file\n%%EOF\n";
    let r = identify(&write(&s, "header-only.pdf", header_only)).unwrap();
    assert_eq!((r.kind, r.page_count, r.error), (Kind::Pdf, None, Some(ErrorCode::InvalidPdf)));
    let tiff = [b"II*\0\x08\0\0\0".as_slice(), &[0u8; 64]].concat();
    assert_eq!(identify(&write(&s, "scan.tif", &tiff)).unwrap().kind, Kind::Unknown);
    // 120 rows and blank lines between some of them: 3 pages of 50.
    let csv: String = (0..120).map(|i| if i % 10 == 0 { format!("{i},x\n\n") } else { format!("{i},x\n") }).collect();
    let r = identify(&write(&s, "rows.csv", csv.as_bytes())).unwrap();
    assert_eq!((r.kind, r.page_count), (Kind::Csv, Some(3)));
}

#[test]
fn zip_that_is_not_ooxml_is_unknown_and_binary_is_unknown() {
    let scratch = Scratch::new("identify");
    let zip_path = scratch.path("plain.zip");
    {
        use std::io::Write;
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).unwrap());
        zip.start_file("readme.txt", zip::write::SimpleFileOptions::default()).unwrap();
        zip.write_all(b"hello").unwrap();
        zip.finish().unwrap();
    }
    assert_eq!(identify(&zip_path).unwrap().kind, Kind::Unknown);
    let bin = scratch.path("random.bin");
    std::fs::write(&bin, (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect::<Vec<_>>()).unwrap();
    assert_eq!(identify(&bin).unwrap().kind, Kind::Unknown);
    let empty = scratch.path("empty");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(identify(&empty).unwrap().kind, Kind::Unknown);
}

#[test]
fn missing_file_is_io_error() {
    let err = identify(std::path::Path::new("/nonexistent/file.pdf")).unwrap_err();
    assert_eq!(err.code, ErrorCode::IoError);
}

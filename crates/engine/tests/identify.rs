//! identify() on representative corpus files: kind, page count and encryption come from
//! the bytes, following the rules documented in `engine::identify`.

mod common;

use common::{corpus_file, Scratch};
use engine::{identify, ErrorCode, Kind};

fn id(name: &str) -> Option<engine::Identification> {
    let path = corpus_file(name)?;
    Some(identify(&path).unwrap_or_else(|e| panic!("{name}: {e}")))
}

#[test]
fn pdf_is_recognised_with_its_page_count() {
    let Some(r) = id("latex-outline-4-pages.pdf") else {
        return;
    };
    assert_eq!((r.kind, r.page_count, r.encrypted, r.error), (Kind::Pdf, Some(4), false, None));
    let r = id("freeculture-book-352-pages.pdf").unwrap();
    assert_eq!(r.page_count, Some(352));
}

#[test]
fn pdf_header_may_start_after_leading_text() {
    let Some(r) = id("pdf20-offset-start.pdf") else {
        return;
    };
    assert_eq!((r.kind, r.page_count, r.error), (Kind::Pdf, Some(1), None));
}

#[test]
fn header_only_pdf_is_kind_pdf_with_invalid_pdf_error() {
    let Some(r) = id("malformed-header-only.pdf") else {
        return;
    };
    assert_eq!((r.kind, r.page_count, r.error), (Kind::Pdf, None, Some(ErrorCode::InvalidPdf)));
}

#[test]
fn user_password_pdf_is_encrypted_and_still_counted() {
    let Some(r) = id("encrypted-libreoffice-rc4.pdf") else {
        return;
    };
    assert_eq!((r.kind, r.encrypted, r.password_required, r.error), (Kind::Pdf, true, true, None));
    let r = id("encrypted-aes256-unicode-password.pdf").unwrap();
    assert!(r.encrypted && r.password_required);
    // The page tree is not encrypted, so MuPDF can count without the password.
    assert!(r.page_count.is_none() || r.page_count == Some(1));
}

#[test]
fn owner_password_only_pdf_is_encrypted_but_needs_no_password() {
    let Some(r) = id("owner-password-aes-30-pages.pdf") else {
        return;
    };
    assert_eq!((r.kind, r.page_count, r.encrypted, r.password_required), (Kind::Pdf, Some(30), true, false));
}

#[test]
fn images_are_one_page_by_magic_bytes() {
    for (name, kind) in [
        ("photo-exif-420dpi.jpg", Kind::Jpeg),
        ("map-multilingual-cmyk.jpg", Kind::Jpeg),
        ("typewriter-text.png", Kind::Png),
        ("webp-lossy.webp", Kind::Webp),
        ("webp-alpha.webp", Kind::Webp),
    ] {
        let Some(r) = id(name) else { return };
        assert_eq!((r.kind, r.page_count), (kind, Some(1)), "{name}");
    }
}

#[test]
fn tiff_is_unknown() {
    let Some(r) = id("deslant-scan.tif") else {
        return;
    };
    assert_eq!((r.kind, r.page_count), (Kind::Unknown, None));
}

#[test]
fn docx_page_count_comes_from_app_xml_pages_else_one() {
    for name in ["docx-tables.docx", "docx-empty.docx", "docx-strict-ooxml.docx", "docx-with-images.docx"] {
        let Some(r) = id(name) else { return };
        assert_eq!(r.kind, Kind::Docx, "{name}");
        assert!(r.page_count.unwrap() >= 1, "{name}");
    }
    assert_eq!(id("docx-tables.docx").unwrap().page_count, Some(1));
}

#[test]
fn xlsx_page_count_is_the_number_of_sheets() {
    let Some(r) = id("xlsx-strict-ooxml.xlsx") else {
        return;
    };
    assert_eq!((r.kind, r.page_count), (Kind::Xlsx, Some(1)));
    let r = id("xlsx-pivot-tables.xlsx").unwrap();
    assert_eq!(r.kind, Kind::Xlsx);
    assert!(r.page_count.unwrap() > 1, "pivot workbook has several sheets: {r:?}");
}

#[test]
fn office_encrypted_package_is_encrypted_xlsx() {
    let Some(r) = id("xlsx-password-protected.xlsx") else {
        return;
    };
    assert_eq!((r.kind, r.page_count, r.encrypted, r.password_required), (Kind::Xlsx, None, true, true));
}

#[test]
fn csv_page_count_is_non_blank_lines_per_50_rounded_up() {
    for name in ["country-codes-utf8.csv", "unsd-regions-chinese.csv", "gdp-by-country.csv"] {
        let Some(path) = corpus_file(name) else {
            return;
        };
        let r = identify(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count() as u32;
        assert_eq!((r.kind, r.page_count), (Kind::Csv, Some(lines.div_ceil(50).max(1))), "{name}");
    }
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

//! The lossless structure steps of compress beside the fonts: XMP metadata deflated
//! (not in PDF/A files, which require it unfiltered) and ToUnicode CMaps cut to the
//! codes shown, at every level, with the same metadata and the same extracted text.

mod common;

use std::path::Path;
use std::process::Command;

use common::{compress_at, corpus_file, Scratch};
use engine::pagework::compress::CompressLevel;
use mupdf::pdf::PdfDocument;

const LEVELS: [CompressLevel; 3] = [CompressLevel::Light, CompressLevel::Balanced, CompressLevel::Strong];

/// The catalogue's XMP: (its /Filter, its decoded bytes).
fn metadata(path: &Path) -> (Option<String>, Vec<u8>) {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let md = doc.catalog().unwrap().get_dict("Metadata").unwrap().expect("the file has XMP metadata");
    (md.get_dict("Filter").unwrap().map(|f| f.to_string()), md.read_stream().unwrap())
}

/// The decoded bytes of every font's ToUnicode CMap.
fn tounicode_bytes(path: &Path) -> usize {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let mut total = 0;
    for i in 1..doc.count_objects().unwrap() as i32 {
        let Ok(Some(obj)) = doc.new_indirect(i, 0).and_then(|o| o.resolve()) else { continue };
        if obj.is_dict().unwrap_or(false) {
            if let Ok(Some(tu)) = obj.get_dict("ToUnicode") {
                total += tu.read_stream().map(|s| s.len()).unwrap_or(0);
            }
        }
    }
    total
}

fn text(path: &Path) -> String {
    let out = Command::new("pdftotext").arg(path).arg("-").output().expect("pdftotext (poppler-utils)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn xmp_metadata_is_deflated_at_every_level_except_in_pdfa_files_at_light() {
    let s = Scratch::new("compress-xmp");
    for (name, pdfa) in [("pdf20-offset-start.pdf", false), ("pdfa-crazyones.pdf", true)] {
        let Some(input) = corpus_file(name) else { return };
        let (filter, before) = metadata(&input);
        assert_eq!(filter, None, "{name}: stored unfiltered");
        for level in LEVELS {
            let out = s.path("out.pdf");
            compress_at(&input, &out, level);
            let (filter, after) = metadata(&out);
            assert_eq!(after, before, "{name} {level:?}: the same XMP");
            // Light keeps a PDF/A file's XMP unfiltered (PDF/A requires it); the lossy
            // levels drop its OutputIntents, so no longer keep PDF/A, and deflate it too.
            let want = if pdfa && level == CompressLevel::Light { None } else { Some("/FlateDecode".to_owned()) };
            assert_eq!(filter, want, "{name} {level:?}");
        }
    }
}

#[test]
fn tounicode_cmaps_are_cut_to_the_codes_shown_keeping_the_extracted_text() {
    let s = Scratch::new("compress-tounicode");
    for name in ["latex-outline-4-pages.pdf", "with-file-attachment.pdf"] {
        let Some(input) = corpus_file(name) else { return };
        let (before, in_text) = (tounicode_bytes(&input), text(&input));
        for level in LEVELS {
            let out = s.path("out.pdf");
            compress_at(&input, &out, level);
            let after = tounicode_bytes(&out);
            assert!(after * 2 < before, "{name} {level:?}: ToUnicode {before} -> {after} bytes");
            assert_eq!(text(&out), in_text, "{name} {level:?}: pdftotext's text");
        }
    }
}

//! The lossless structure steps of compress beside the fonts: XMP metadata deflated
//! (not in PDF/A files, which require it unfiltered) and ToUnicode CMaps cut to the
//! codes shown, at every level, with the same metadata and the same extracted text; and
//! what no viewer shows dropped at the lossy levels only.

mod common;

use std::path::Path;

use common::{build_pdf, compress_at, corpus_file, stream, Scratch};
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
    let out = common::tool("pdftotext").arg(path).arg("-").output().expect("pdftotext (poppler-utils)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn xmp_metadata_is_deflated_at_every_level_except_in_pdfa_files_at_light() {
    let s = Scratch::new("compress-xmp");
    for (name, pdfa) in [("pdf20-offset-start.pdf", false), ("pdfa-crazyones.pdf", true)] {
        let input = corpus_file(name);
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
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn tounicode_cmaps_are_cut_to_the_codes_shown_keeping_the_extracted_text() {
    let s = Scratch::new("compress-tounicode");
    for name in ["latex-outline-4-pages.pdf", "with-file-attachment.pdf"] {
        let input = corpus_file(name);
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

/// Whether any object of `path` (its printed form, or a stream's decoded bytes) holds `marker`.
fn holds(path: &Path, marker: &str) -> bool {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    (1..doc.count_objects().unwrap() as i32).any(|i| {
        // A stream is one through its reference (the resolved dictionary is not).
        let Ok(reference) = doc.new_indirect(i, 0) else { return false };
        let Ok(Some(obj)) = reference.resolve() else { return false };
        obj.to_string().contains(marker)
            || (reference.is_stream().unwrap_or(false)
                && reference.read_stream().is_ok_and(|b| String::from_utf8_lossy(&b).contains(marker)))
    })
}

#[test]
fn private_data_thumbnails_and_repeated_metadata_are_dropped_at_the_lossy_levels_only() {
    let s = Scratch::new("compress-private");
    let input = s.path("private.pdf");
    let content = b"BT /F1 24 Tf 20 100 Td (Hello) Tj ET";
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R /Metadata 6 0 R /PieceInfo << /App << /Private 7 0 R >> >> >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R /Thumb 5 0 R \
           /PieceInfo << /Illustrator << /Private 8 0 R >> >> /Metadata 9 0 R \
           /Resources << /Font << /F1 10 0 R >> >> >>"
            .to_vec(),
        stream("", content),
        stream("/Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8 /ThumbMarker true", &[0, 255, 255, 0]),
        stream("/Type /Metadata /Subtype /XML", b"<x:xmpmeta>DOCUMENT-XMP</x:xmpmeta>"),
        b"(CATALOG-PRIVATE-DATA)".to_vec(),
        stream("", b"PAGE-PRIVATE-DATA"),
        stream("/Type /Metadata /Subtype /XML", b"<x:xmpmeta>PAGE-XMP</x:xmpmeta>"),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ];
    std::fs::write(&input, build_pdf(&objects)).unwrap();
    let dropped = ["CATALOG-PRIVATE-DATA", "PAGE-PRIVATE-DATA", "PAGE-XMP", "ThumbMarker", "PieceInfo", "/Thumb"];
    for marker in dropped {
        assert!(holds(&input, marker), "the input holds {marker}");
    }
    for level in LEVELS {
        let out = s.path("out.pdf");
        compress_at(&input, &out, level);
        for marker in dropped {
            assert_eq!(holds(&out, marker), level == CompressLevel::Light, "{level:?}: {marker}");
        }
        assert!(holds(&out, "DOCUMENT-XMP"), "{level:?}: the document's XMP is kept");
        assert!(text(&out).contains("Hello"), "{level:?}: the text is kept");
    }
}

#[test]
fn objects_packed_in_object_streams_survive_the_drop_of_unreachable_objects() {
    // The unreachable objects are deleted before the save without being parsed, and the
    // object streams are recognised from the xref table: the page, its font and an
    // unreachable dictionary all sit in one object stream here.
    let s = Scratch::new("compress-objstm");
    let plain = s.path("plain.pdf");
    let packed = s.path("packed.pdf");
    let content = b"BT /F1 24 Tf 20 100 Td (Hello) Tj ET";
    let objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R \
           /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_vec(),
        stream("", content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
        b"<< /Leftover (UNREACHABLE-DICT) >>".to_vec(),
        stream("", b"UNREACHABLE-STREAM"),
    ];
    std::fs::write(&plain, build_pdf(&objects)).unwrap();
    let ok = common::tool("qpdf")
        .args(["--preserve-unreferenced", "--object-streams=generate"])
        .arg(&plain)
        .arg(&packed)
        .status()
        .unwrap();
    assert!(ok.success(), "qpdf packs the test file");
    let raw = std::fs::read(&packed).unwrap();
    assert!(raw.windows(7).any(|w| w == b"/ObjStm"), "the input has an object stream");
    for marker in ["UNREACHABLE-DICT", "UNREACHABLE-STREAM"] {
        assert!(holds(&packed, marker), "the input holds {marker}");
    }
    for level in LEVELS {
        let out = s.path("out.pdf");
        compress_at(&packed, &out, level);
        assert!(text(&out).contains("Hello"), "{level:?}: the page and its font are kept");
        for marker in ["UNREACHABLE-DICT", "UNREACHABLE-STREAM"] {
            assert!(!holds(&out, marker), "{level:?}: {marker} is dropped");
        }
    }
}

/// An ICC profile of `len` bytes whose header carries the creation date `second`.
fn icc_profile(len: usize, second: u8) -> Vec<u8> {
    let mut p: Vec<u8> = (0..len as u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    p[0..4].copy_from_slice(&(len as u32).to_be_bytes());
    p[36..40].copy_from_slice(b"acsp");
    p[24..36].copy_from_slice(&[0x07, 0xea, 0, 11, 0, 29, 0, 9, 0, 41, 0, second]);
    p[84..100].fill(second);
    p
}

/// A page drawing two RGB images, each with its own copy of one ICC profile whose copies
/// differ in `differ` (the header's date and ID, or a byte of the profile itself).
fn two_icc_images(differ: fn(&mut Vec<u8>)) -> Vec<u8> {
    let mut second = icc_profile(6000, 1);
    differ(&mut second);
    let image = |icc: u32| {
        stream(
            &format!("/Type /XObject /Subtype /Image /Width 2 /Height 2 /BitsPerComponent 8 /ColorSpace [/ICCBased {icc} 0 R]"),
            &[200, 10, 10, 10, 200, 10, 10, 10, 200, 90, 90, 90],
        )
    };
    build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R \
           /Resources << /XObject << /Im1 5 0 R /Im2 6 0 R >> >> >>"
            .to_vec(),
        stream("", b"q 50 0 0 50 10 10 cm /Im1 Do Q q 50 0 0 50 100 100 cm /Im2 Do Q"),
        image(7),
        image(8),
        stream("/N 3 /Alternate /DeviceRGB", &icc_profile(6000, 0)),
        stream("/N 3 /Alternate /DeviceRGB", &second),
    ])
}

/// The object numbers of the two images' ICC profiles in `path`.
fn icc_numbers(path: &Path) -> (i32, i32) {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let xo = doc.find_page(0).unwrap().get_dict("Resources").unwrap().unwrap().get_dict("XObject").unwrap().unwrap();
    let icc = |name: &str| {
        let cs = xo.get_dict(name).unwrap().unwrap().get_dict("ColorSpace").unwrap().unwrap();
        cs.get_array(1).unwrap().unwrap().as_indirect().unwrap()
    };
    (icc("Im1"), icc("Im2"))
}

#[test]
fn icc_profiles_differing_only_in_their_date_and_id_are_stored_once_at_every_level() {
    let s = Scratch::new("compress-icc");
    let input = s.path("icc.pdf");
    std::fs::write(&input, two_icc_images(|_| {})).unwrap();
    let (a, b) = icc_numbers(&input);
    assert_ne!(a, b);
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        compress_at(&input, &out, level);
        let (a, b) = icc_numbers(&out);
        assert_eq!(a, b, "{level:?}: one profile for both images");
    }
}

#[test]
fn icc_profiles_that_differ_in_content_are_both_kept() {
    let s = Scratch::new("compress-icc-other");
    let input = s.path("icc.pdf");
    std::fs::write(&input, two_icc_images(|p| p[500] ^= 1)).unwrap();
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        compress_at(&input, &out, level);
        let (a, b) = icc_numbers(&out);
        assert_ne!(a, b, "{level:?}: two profiles");
    }
}

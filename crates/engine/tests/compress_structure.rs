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

/// A page filling a square through an indexed palette over the spot space [/Cyan /Spot]
/// (DeviceN; its tint transform into DeviceCMYK a sampled function on a `grid` x `grid`
/// grid of `samples`), once as an image and once as the fill colour of a rectangle.
fn spot_palette_page(grid: usize, samples: &[u8]) -> Vec<u8> {
    build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 120] /Contents 4 0 R \
           /Resources << /XObject << /Im1 5 0 R >> /ColorSpace << /CS0 6 0 R >> >> >>"
            .to_vec(),
        stream("", b"q 80 0 0 80 10 10 cm /Im1 Do Q /CS0 cs 2 scn 110 10 80 80 re f"),
        stream(
            "/Type /XObject /Subtype /Image /Width 2 /Height 2 /BitsPerComponent 8 /ColorSpace 6 0 R",
            &[0, 1, 2, 3],
        ),
        b"[/Indexed [/DeviceN [/Cyan /Spot] /DeviceCMYK 7 0 R] 3 <0000FF000040C0FF>]".to_vec(),
        stream(
            &format!(
                "/FunctionType 0 /Domain [0 1 0 1] /Range [0 1 0 1 0 1 0 1] /Size [{grid} {grid}] /BitsPerSample 8"
            ),
            samples,
        ),
    ])
}

/// Samples of a tint transform on a `grid` x `grid` grid (the first input fastest), 4
/// outputs each: `f(cyan, spot)` in 0..1.
fn tint_samples(grid: usize, f: impl Fn(f64, f64) -> [f64; 4]) -> Vec<u8> {
    let mut out = Vec::new();
    for j in 0..grid {
        for i in 0..grid {
            let (c, s) = (i as f64 / (grid - 1) as f64, j as f64 / (grid - 1) as f64);
            out.extend(f(c, s).map(|v| (v * 255.0).round() as u8));
        }
    }
    out
}

/// The page's indexed space /CS0 in `path`: the family of its base and the /Size of the
/// base's tint transform (empty when the base is a process space).
fn palette(path: &Path) -> (String, String) {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let res = doc.find_page(0).unwrap().get_dict("Resources").unwrap().unwrap();
    let cs = res.get_dict("ColorSpace").unwrap().unwrap().get_dict("CS0").unwrap().unwrap();
    let base = cs.get_array(1).unwrap().unwrap().resolve().unwrap().unwrap();
    if base.is_name().unwrap() {
        return (String::from_utf8(base.as_name().unwrap()).unwrap(), String::new());
    }
    let family = String::from_utf8(base.get_array(0).unwrap().unwrap().as_name().unwrap()).unwrap();
    let tint = base.get_array(3).unwrap().unwrap().resolve().unwrap().unwrap();
    (family, tint.get_dict("Size").unwrap().unwrap().to_string())
}

/// Pages drawn by poppler ([`common::poppler_grey`]), not on the mupdf crate's shared store: the
/// two tint tests, run at once on the crate's contexts, drew each other's spot colours (up to 21
/// grey levels off). Not by Debian's `mutool` either: version 1.21 draws the flattened CMYK
/// palette 178 levels off where MuPDF 1.27, poppler and Ghostscript agree with the input.
fn worst_pixel_difference(a: &Path, b: &Path) -> u8 {
    let (a, b) = (common::poppler_grey(a, 72), common::poppler_grey(b, 72));
    assert_eq!(a.len(), b.len(), "page sizes");
    a.iter().zip(&b).map(|(x, y)| x.abs_diff(*y)).max().unwrap()
}

#[test]
fn multilinear_tint_transforms_are_stored_by_their_corners_at_every_level_and_look_the_same() {
    let s = Scratch::new("compress-tint-corners");
    let input = s.path("spot.pdf");
    // Cyan adds cyan, the spot adds a red: each sample the corners' interpolation.
    let samples = tint_samples(9, |c, s| [c, 0.6 * s, 0.5 * s, 0.1 * c * s]);
    std::fs::write(&input, spot_palette_page(9, &samples)).unwrap();
    assert_eq!(palette(&input), ("DeviceN".into(), "[9 9]".into()));
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        compress_at(&input, &out, level);
        assert_eq!(palette(&out), ("DeviceN".into(), "[2 2]".into()), "{level:?}: the spot space kept, its grid cut");
        let worst = worst_pixel_difference(&input, &out);
        assert!(worst <= 1, "{level:?}: pixels differ by up to {worst}");
    }
}

#[test]
fn large_tint_transforms_that_are_not_multilinear_flatten_their_palettes_at_the_lossy_levels_only() {
    let s = Scratch::new("compress-spot-palette");
    let input = s.path("spot.pdf");
    // A curved response (as a measured spot-to-process table): not multilinear, 33 x 33 x 4 bytes.
    let samples = tint_samples(33, |c, s| [c * c, s.sqrt() * 0.6, 0.5 * s * s, 0.2 * (c * s).sqrt()]);
    std::fs::write(&input, spot_palette_page(33, &samples)).unwrap();
    assert_eq!(palette(&input), ("DeviceN".into(), "[33 33]".into()));
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        compress_at(&input, &out, level);
        if level == CompressLevel::Light {
            assert_eq!(palette(&out), ("DeviceN".into(), "[33 33]".into()), "light keeps the spot space as it is");
        } else {
            assert_eq!(palette(&out), ("DeviceCMYK".into(), String::new()), "{level:?}");
            assert!(!holds(&out, "/FunctionType"), "{level:?}: the tint transform is dropped");
        }
        let worst = worst_pixel_difference(&input, &out);
        assert!(worst <= 2, "{level:?}: pixels differ by up to {worst}");
    }
}

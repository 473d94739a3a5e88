//! Type 3 fonts lose the glyph procedures no code shown selects (a glyph drawn only
//! inside a tiling pattern's cell counts as shown), and streams written for 7-bit
//! channels (ASCIIHex, ASCII85) lose that layer, at every level, rendering the same; an
//! ASCII layer that does not decode cleanly is kept as it is.

mod common;

use std::path::Path;

use common::{build_pdf, compress_at, grey_pixels, stream, Scratch};
use engine::pagework::compress::CompressLevel;
use mupdf::pdf::PdfDocument;

const LEVELS: [CompressLevel; 3] = [CompressLevel::Light, CompressLevel::Balanced, CompressLevel::Strong];

/// The glyph names of the Type 3 font `F1` of the first page.
fn char_procs(path: &Path) -> Vec<String> {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let page = doc.find_page(0).unwrap();
    let procs = page.get_dict_inheritable("Resources").unwrap().unwrap();
    let procs = procs.get_dict("Font").unwrap().unwrap().get_dict("F1").unwrap().unwrap();
    let procs = procs.get_dict("CharProcs").unwrap().unwrap();
    let mut names: Vec<String> =
        (0..procs.dict_len().unwrap()).map(|i| procs.get_dict_key(i as i32).unwrap().unwrap().to_string()).collect();
    names.sort();
    names
}

/// A page showing glyph `a` of a Type 3 font directly and glyph `c` inside a tiling
/// pattern's cell; glyph `b` is shown nowhere. Each glyph fills its own rectangle.
fn type3_pdf(path: &Path) {
    let glyph = |x: u32| stream("", format!("100 0 0 0 100 100 d1 {x} 0 30 100 re f").as_bytes());
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Resources << /Font << /F1 4 0 R >> /Pattern << /P1 9 0 R >> >> /Contents 5 0 R >>".to_vec(),
        b"<< /Type /Font /Subtype /Type3 /FontBBox [0 0 100 100] /FontMatrix [0.01 0 0 0.01 0 0] /CharProcs << /a 6 0 R /b 7 0 R /c 8 0 R >> /Encoding << /Type /Encoding /Differences [97 /a /b /c] >> /FirstChar 97 /LastChar 99 /Widths [100 100 100] /Resources << >> >>".to_vec(),
        stream("", b"BT /F1 40 Tf 20 20 Td (a) Tj ET /Pattern cs /P1 scn 100 100 80 80 re f"),
        glyph(0),
        glyph(35),
        glyph(70),
        stream(
            "/Type /Pattern /PatternType 1 /PaintType 1 /TilingType 1 /BBox [0 0 40 40] /XStep 40 /YStep 40 /Resources << /Font << /F1 4 0 R >> >>",
            b"BT /F1 40 Tf 0 0 Td (c) Tj ET",
        ),
    ]);
    std::fs::write(path, pdf).unwrap();
}

#[test]
fn a_type3_font_loses_the_glyphs_no_code_shown_selects_but_keeps_those_a_pattern_shows() {
    let s = Scratch::new("type3");
    let input = s.path("in.pdf");
    type3_pdf(&input);
    assert_eq!(char_procs(&input), ["/a", "/b", "/c"]);
    let before = grey_pixels(&input, 72.0);
    assert!(before[0].iter().any(|&p| p < 128), "the test font draws");
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        compress_at(&input, &out, level);
        assert_eq!(char_procs(&out), ["/a", "/c"], "{level:?}");
        assert!(grey_pixels(&out, 72.0) == before, "{level:?}: renders differently");
    }
}

/// A page whose content stream is `filter`-encoded `encoded`.
fn ascii_pdf(path: &Path, filter: &str, encoded: &[u8]) {
    let pdf = build_pdf(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R >>".to_vec(),
        stream(&format!("/Filter {filter}"), encoded),
    ]);
    std::fs::write(path, pdf).unwrap();
}

fn content_filter(path: &Path) -> String {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let page = doc.find_page(0).unwrap();
    let contents = page.get_dict("Contents").unwrap().unwrap();
    contents.get_dict("Filter").unwrap().map(|f| f.to_string()).unwrap_or_default()
}

#[test]
fn an_ascii_hex_or_ascii85_layer_is_taken_off_and_the_page_renders_the_same() {
    let s = Scratch::new("ascii");
    // Long enough that the layer's weight, not the file's structure, decides the size.
    let content: Vec<u8> = (0..60)
        .flat_map(|i| format!("0 0 {} rg {} 20 3 60 re f 1 0 0 rg 50 120 40 40 re f\n", i % 2, 20 + i * 2).into_bytes())
        .collect();
    let hex: String = content.iter().map(|b| format!("{b:02x}")).collect::<String>() + ">";
    // ASCII85 of the same bytes, written here so the test does not trust the engine's decoder.
    let mut a85 = String::new();
    for chunk in content.chunks(4) {
        let mut word = [0u8; 4];
        word[..chunk.len()].copy_from_slice(chunk);
        let mut v = u32::from_be_bytes(word) as u64;
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = (v % 85) as u8 + b'!';
            v /= 85;
        }
        a85.extend(digits[..chunk.len() + 1].iter().map(|&d| d as char));
    }
    a85.push_str("~>");
    for (filter, encoded) in [("/ASCIIHexDecode", hex.as_bytes()), ("[/A85]", a85.as_bytes())] {
        let input = s.path("in.pdf");
        ascii_pdf(&input, filter, encoded);
        let before = grey_pixels(&input, 72.0);
        assert!(before[0].iter().any(|&p| p < 200), "{filter}: the test page draws");
        for level in LEVELS {
            let out = s.path(&format!("{level:?}.pdf"));
            compress_at(&input, &out, level);
            let f = content_filter(&out);
            assert!(!f.contains("ASCII") && !f.contains("A85") && !f.contains("AHx"), "{filter} at {level:?}: {f}");
            assert!(grey_pixels(&out, 72.0) == before, "{filter} at {level:?}: renders differently");
        }
    }
}

#[test]
fn an_ascii_hex_layer_with_binary_garbage_is_kept() {
    let s = Scratch::new("ascii-bad");
    let input = s.path("in.pdf");
    let mut encoded = b"3020302031203020726720".to_vec();
    encoded.extend_from_slice(&[0xC3, 0x92, 0x01, 0xFF]);
    encoded.extend_from_slice(b"313020313020353020353020726520663e");
    ascii_pdf(&input, "/AHx", &encoded);
    for level in LEVELS {
        let out = s.path(&format!("{level:?}.pdf"));
        compress_at(&input, &out, level);
        let doc = PdfDocument::open(out.to_str().unwrap()).unwrap();
        let page = doc.find_page(0).unwrap();
        let contents = page.get_dict("Contents").unwrap().unwrap();
        // What another reader would decode is left to it: the bytes as they were.
        assert_eq!(content_filter(&out), "/AHx", "{level:?}");
        assert_eq!(contents.read_raw_stream().unwrap(), encoded, "{level:?}");
    }
}

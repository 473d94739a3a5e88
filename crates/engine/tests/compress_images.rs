//! The compress levels' image handling (src/pagework/compress/images.rs and MuPDF's rewriter
//! behind it), on small PDFs built here: which images are downsampled to what, in which
//! encoding, and what is kept (SMask, Decode, text, bitonal images).

mod common;

use std::path::Path;

use common::{build_pdf, corpus_file, stream, Scratch};
use engine::pagework::compress::{compress, CompressLevel, CompressOptions};
use engine::JobControl;
use jpeg_encoder::{ColorType, Encoder};
use mupdf::pdf::{PdfDocument, PdfObject};

fn obj(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn deflate(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(data).unwrap();
    z.finish().unwrap()
}

/// A photo-like `w` x `h` image: gradients plus texture (so JPEG has work to do).
fn pixels(w: u32, h: u32, comps: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity((w * h * comps) as usize);
    for y in 0..h {
        for x in 0..w {
            for c in 0..comps {
                let t = ((x * 7 + y * 3 + c * 50) % 256) as f32;
                let n = ((x.wrapping_mul(2654435761) ^ y.wrapping_mul(40503)) >> 13) % 40;
                v.push((t * 0.8 + n as f32) as u8);
            }
        }
    }
    v
}

fn jpeg(w: u32, h: u32, comps: u32) -> Vec<u8> {
    let mut out = Vec::new();
    let mut e = Encoder::new(&mut out, 95);
    e.set_progressive(true);
    let ct = if comps == 1 { ColorType::Luma } else { ColorType::Rgb };
    e.encode(&pixels(w, h, comps), w as u16, h as u16, ct).unwrap();
    out
}

/// One page per content stream, all sharing the resources `/XObject << xobjects >>` and
/// a Helvetica font; `extra` objects follow (numbered from 3 + 2 x pages).
fn pdf_with(contents: &[&str], xobjects: &str, extra: Vec<Vec<u8>>) -> Vec<u8> {
    let n = contents.len();
    let font = 3 + 2 * n;
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 3 + 2 * i)).collect();
    let mut objects = vec![
        obj("<< /Type /Catalog /Pages 2 0 R >>"),
        obj(&format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" "))),
    ];
    for (i, c) in contents.iter().enumerate() {
        objects.push(obj(&format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {} 0 R /Resources << /Font << /F1 {font} 0 R >> /XObject << {xobjects} >> >> >>",
            4 + 2 * i
        )));
        let text = format!("{c} BT /F1 12 Tf 72 72 Td (Hello compress page {}) Tj ET", i + 1);
        objects.push(stream("", text.as_bytes()));
    }
    objects.push(obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"));
    objects.extend(extra);
    build_pdf(&objects)
}

fn run(
    scratch: &Scratch,
    name: &str,
    pdf: &[u8],
    level: &str,
) -> (std::path::PathBuf, engine::pagework::compress::CompressResult) {
    let input = scratch.path(&format!("{name}.pdf"));
    std::fs::write(&input, pdf).unwrap();
    let out = scratch.path(&format!("{name}-{level}.out.pdf"));
    let o = CompressOptions { level: CompressLevel::parse(level).unwrap(), ..Default::default() };
    let r = compress(&input, &out, &o, &JobControl::new()).unwrap();
    (out, r)
}

/// The image XObjects of page `page` of `path`.
fn images(path: &Path, page: i32) -> Vec<PdfObject> {
    // The objects borrow the document's MuPDF state: kept alive for the test's length.
    let doc: &'static PdfDocument = Box::leak(Box::new(PdfDocument::open(path.to_str().unwrap()).unwrap()));
    let p = doc.find_page(page).unwrap();
    let xo = p.get_dict("Resources").unwrap().unwrap().get_dict("XObject").unwrap().unwrap();
    xo.dict_iter().unwrap().map(|e| e.unwrap().1).collect()
}

/// An entry of `o` (an indirect reference or a direct dictionary).
fn entry(o: &PdfObject, key: &str) -> Option<PdfObject> {
    let d = o.resolve().unwrap().unwrap_or_else(|| o.try_clone().unwrap());
    d.get_dict(key).unwrap()
}

fn int(o: &PdfObject, key: &str) -> i32 {
    entry(o, key).map(|v| v.as_int().unwrap()).unwrap_or(-1)
}

fn filter(o: &PdfObject) -> String {
    let f = entry(o, "Filter").unwrap();
    let f = if f.is_array().unwrap() { f.get_array(0).unwrap().unwrap() } else { f };
    String::from_utf8(f.as_name().unwrap()).unwrap()
}

/// The JFIF density (dots per inch) of a JPEG, when it has a JFIF APP0 segment in dpi.
/// The engine's pass writes the target dpi; MuPDF's rewriter writes the pixmap's.
fn jfif_dpi(data: &[u8]) -> Option<u16> {
    let app0 = data.get(2..20)?;
    (app0[0] == 0xff && app0[1] == 0xe0 && &app0[4..9] == b"JFIF\0" && app0[11] == 1)
        .then(|| u16::from_be_bytes([app0[12], app0[13]]))
}

fn text_of(path: &Path) -> String {
    let out = common::tool("pdftotext").arg(path).arg("-").output().expect("pdftotext (poppler-utils)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn qpdf_ok(path: &Path) -> bool {
    common::tool("qpdf")
        .arg("--check")
        .arg(path)
        .status()
        .map(|s| matches!(s.code(), Some(0) | Some(3)))
        .unwrap_or(false)
}

// 1200 px over 288 pt = 300 dpi.
const AT_300: &str = "q 288 0 0 288 100 400 cm /Im1 Do Q";

#[test]
fn balanced_halves_a_300_dpi_jpeg_into_a_smaller_jpeg_and_keeps_the_text() {
    let scratch = Scratch::new("compress-img-jpeg");
    let img = stream("/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", &jpeg(1200, 1200, 3));
    let pdf = pdf_with(&[AT_300], "/Im1 6 0 R", vec![img]);
    let (out, r) = run(&scratch, "jpeg", &pdf, "balanced");
    assert!(!r.kept_original && r.output_bytes < r.input_bytes / 3, "{r:?}");
    let im = images(&out, 0);
    assert_eq!(im.len(), 1);
    assert_eq!((int(&im[0], "Width"), int(&im[0], "Height")), (600, 600));
    assert_eq!(filter(&im[0]), "DCTDecode");
    assert_eq!(
        jfif_dpi(&im[0].read_raw_stream().unwrap()),
        Some(150),
        "re-encoded by the engine's pass, not MuPDF's rewriter"
    );
    assert!(text_of(&out).contains("Hello compress page 1"));
    assert!(qpdf_ok(&out));
}

/// A CMYK JPEG (the jpeg-encoder crate writes Adobe's inverted CMYK, as Photoshop does).
fn cmyk_jpeg(w: u32, h: u32) -> Vec<u8> {
    let mut out = Vec::new();
    Encoder::new(&mut out, 95).encode(&pixels(w, h, 4), w as u16, h as u16, ColorType::Cmyk).unwrap();
    out
}

#[test]
fn a_device_cmyk_image_keeps_its_device_space_at_the_lossy_levels() {
    // MuPDF backs DeviceCMYK with its own 187 KB ICC profile, which its rewriter wrote out as
    // the new image's ICCBased space: a small CMYK image came out larger than the input.
    let scratch = Scratch::new("compress-img-cmyk");
    let img = stream(
        "/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceCMYK /BitsPerComponent 8 /Decode [1 0 1 0 1 0 1 0] /Filter /DCTDecode",
        &cmyk_jpeg(1200, 1200),
    );
    let pdf = pdf_with(&[AT_300], "/Im1 6 0 R", vec![img]);
    let (light, _) = run(&scratch, "cmyk", &pdf, "light");
    let light_bytes = std::fs::metadata(&light).unwrap().len();
    for level in ["balanced", "strong"] {
        let (out, r) = run(&scratch, "cmyk", &pdf, level);
        assert!(!r.kept_original && r.output_bytes < light_bytes / 2, "{level}: {r:?} against light's {light_bytes} B");
        let im = images(&out, 0);
        let cs = entry(&im[0], "ColorSpace").unwrap();
        assert!(cs.is_name().unwrap(), "{level}: the colour space is {cs:?}");
        assert_eq!(cs.as_name().unwrap(), b"DeviceCMYK", "{level}");
        assert!(int(&im[0], "Width") < 1200, "{level}: downsampled");
        assert!(!std::fs::read(&out).unwrap().windows(8).any(|w| w == b"ICCBased"), "{level}: no profile added");
        assert!(qpdf_ok(&out));
        let (a, b) = (common::poppler_grey(&light, 36), common::poppler_grey(&out, 36));
        let mean = a.iter().zip(&b).map(|(x, y)| x.abs_diff(*y) as f64).sum::<f64>() / a.len() as f64;
        assert!(mean < 3.0, "{level}: the page looks different (mean grey difference {mean:.1})");
    }
}

#[test]
fn strong_takes_a_300_dpi_jpeg_to_72_dpi() {
    let scratch = Scratch::new("compress-img-strong");
    let img = stream("/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /DCTDecode", &jpeg(1200, 1200, 1));
    let pdf = pdf_with(&[AT_300], "/Im1 6 0 R", vec![img]);
    let (out, _) = run(&scratch, "strong", &pdf, "strong");
    let im = images(&out, 0);
    // 1200 x 72 / 300 = 288: DCT-scaled to 300 (1/4), then area-averaged to 288.
    assert_eq!((int(&im[0], "Width"), int(&im[0], "Height")), (288, 288));
    assert_eq!(filter(&im[0]), "DCTDecode");
}

#[test]
fn an_image_keeps_the_resolution_its_largest_use_needs() {
    let scratch = Scratch::new("compress-img-uses");
    let img = stream("/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", &jpeg(1200, 1200, 3));
    // Page 2 draws it over 576 pt: 150 dpi, under balanced's 225 dpi threshold.
    let pdf = pdf_with(&[AT_300, "q 576 0 0 576 18 100 cm /Im1 Do Q"], "/Im1 8 0 R", vec![img]);
    let (out, _) = run(&scratch, "uses", &pdf, "balanced");
    for page in 0..2 {
        let im = images(&out, page);
        assert_eq!(int(&im[0], "Width"), 1200, "page {page}");
    }
    let t = text_of(&out);
    assert!(t.contains("Hello compress page 1") && t.contains("Hello compress page 2"));
}

#[test]
fn smask_and_decode_entries_are_kept() {
    let scratch = Scratch::new("compress-img-smask");
    let alpha: Vec<u8> = (0..1200u32 * 1200).map(|i| if (i % 1200) < 600 { 255 } else { 128 }).collect();
    let img = stream(
        "/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode /SMask 7 0 R /Decode [1 0 1 0 1 0]",
        &jpeg(1200, 1200, 3),
    );
    let mask = stream("/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", &deflate(&alpha));
    let pdf = pdf_with(&[AT_300], "/Im1 6 0 R", vec![img, mask]);
    let (out, _) = run(&scratch, "smask", &pdf, "balanced");
    let im = &images(&out, 0)[0];
    assert_eq!(int(im, "Width"), 600);
    let smask = entry(im, "SMask").expect("SMask kept");
    assert_eq!(int(&smask, "Width"), 1200, "the soft mask is not resampled");
    let decode = entry(im, "Decode").expect("Decode kept");
    assert_eq!(decode.len().unwrap(), 6);
    assert_eq!(decode.get_array(0).unwrap().unwrap().as_float().unwrap(), 1.0);
}

/// Grey rows with a PNG Up predictor on every row, deflated.
fn png_up(px: &[u8], w: u32, h: u32) -> Vec<u8> {
    let mut rows = Vec::new();
    for y in 0..h as usize {
        rows.push(2u8);
        for x in 0..w as usize {
            let above = if y > 0 { px[(y - 1) * w as usize + x] } else { 0 };
            rows.push(px[y * w as usize + x].wrapping_sub(above));
        }
    }
    deflate(&rows)
}

#[test]
fn a_flate_photo_becomes_jpeg_at_balanced_when_much_smaller_and_close_to_it() {
    let scratch = Scratch::new("compress-img-flate-photo");
    let (w, h) = (1200u32, 1200u32);
    let img = stream(
        "/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 1200 /Colors 1 >>",
        &png_up(&pixels(w, h, 1), w, h),
    );
    let pdf = pdf_with(&[AT_300], "/Im1 6 0 R", vec![img]);
    for (level, width) in [("balanced", 600), ("strong", 288)] {
        let (out, _) = run(&scratch, "photo", &pdf, level);
        let im = &images(&out, 0)[0];
        assert_eq!((int(im, "Width"), filter(im).as_str()), (width, "DCTDecode"), "{level}");
    }
}

#[test]
fn a_flat_synthetic_flate_image_stays_flate_at_balanced_and_strong() {
    let scratch = Scratch::new("compress-img-flate");
    // A chart: flat grey bands with thin dark lines, stored with a PNG predictor.
    let (w, h) = (1200u32, 1200u32);
    let px: Vec<u8> = (0..w * h)
        .map(|i| {
            let (x, y) = (i % w, i / w);
            if x % 97 < 2 || y % 131 < 2 {
                20
            } else {
                [250u8, 200, 160, 230][(x / 300) as usize]
            }
        })
        .collect();
    let img = stream(
        "/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /DecodeParms << /Predictor 12 /Columns 1200 /Colors 1 >>",
        &png_up(&px, w, h),
    );
    let pdf = pdf_with(&[AT_300], "/Im1 6 0 R", vec![img]);
    let (out, _) = run(&scratch, "flate", &pdf, "balanced");
    let im = &images(&out, 0)[0];
    assert_eq!((int(im, "Width"), filter(im).as_str()), (600, "FlateDecode"));
    assert!(entry(im, "DecodeParms").is_none());
    // Lossless apart from the averaging: a 2 x 2 block mean of the original.
    let back = im.read_stream().unwrap();
    let mean = (px[0] as u32 + px[1] as u32 + px[1200] as u32 + px[1201] as u32 + 2) / 4;
    assert_eq!(back[0] as u32, mean);
    // strong: downsampled to 72 dpi, and flate when that is smaller than JPEG (as here),
    // so never larger than balanced.
    let (out, _) = run(&scratch, "flate", &pdf, "strong");
    let im = &images(&out, 0)[0];
    assert_eq!((int(im, "Width"), filter(im).as_str()), (288, "FlateDecode"));
}

#[test]
fn black_and_white_images_are_never_averaged_into_grey() {
    let scratch = Scratch::new("compress-img-bitonal");
    let px: Vec<u8> =
        (0..1200u32 * 1200).map(|i| if (i % 1200 / 3 + i / 1200 / 5) % 2 == 0 { 0 } else { 255 }).collect();
    let img = stream("/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", &deflate(&px));
    let pdf = pdf_with(&[AT_300], "/Im1 6 0 R", vec![img]);
    for level in ["balanced", "strong"] {
        let (out, _) = run(&scratch, "bitonal", &pdf, level);
        let im = &images(&out, 0)[0];
        assert_eq!(int(im, "Width"), 1200, "{level}");
        assert_eq!(int(im, "BitsPerComponent"), 1, "{level}: black and white becomes 1-bit");
        assert_ne!(filter(im), "DCTDecode", "{level}");
        // Not resized (300 dpi): every sample kept, 255 -> 1, 0 -> 0, through G4 or flate.
        assert_eq!(im.read_stream().unwrap(), pack(&px, 1200), "{level}");
    }
}

/// 0/255 samples, `w` to a row, packed 8 to a byte (255 -> 1).
fn pack(px: &[u8], w: usize) -> Vec<u8> {
    let mut packed = Vec::new();
    for row in px.chunks(w) {
        for byte in row.chunks(8) {
            packed.push(byte.iter().enumerate().fold(0u8, |b, (i, &v)| b | (((v == 255) as u8) << (7 - i))));
        }
    }
    packed
}

// 2400 px over 288 pt = 600 dpi.
const AT_600: &str = "q 288 0 0 288 100 400 cm /Im1 Do Q";

/// Black text-like strokes on white, `w` x `h`, as 0/255 samples.
fn strokes(w: u32, h: u32) -> Vec<u8> {
    (0..w * h).map(|i| if (i % w / 5 + i / w / 9).is_multiple_of(4) { 0 } else { 255 }).collect()
}

/// A 1-bit image above 450 dpi becomes 300 dpi at balanced (200 at strong) and stays 1-bit; an
/// 8-bit one that is only black and white does too at strong, and at balanced is averaged to
/// grey at 150 dpi and deflated, as Ghostscript's /ebook keeps an 8-bit image.
#[test]
fn a_bitonal_image_above_450_dpi_becomes_300_dpi_and_stays_1_bit() {
    let scratch = Scratch::new("compress-img-bitonal-600");
    let (w, h) = (2400u32, 2400u32);
    let px = strokes(w, h);
    let packed = pack(&px, w as usize);
    let one_bit = stream("/Type /XObject /Subtype /Image /Width 2400 /Height 2400 /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /FlateDecode", &deflate(&packed));
    let eight_bit = stream("/Type /XObject /Subtype /Image /Width 2400 /Height 2400 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", &deflate(&px));
    for (name, img) in [("1-bit", one_bit), ("8-bit", eight_bit)] {
        let pdf = pdf_with(&[AT_600], "/Im1 6 0 R", vec![img]);
        for level in ["balanced", "strong"] {
            let (out, r) = run(&scratch, name, &pdf, level);
            let im = &images(&out, 0)[0];
            // balanced: 600 -> 300 dpi (8-bit: 150 dpi grey); strong: -> 200 dpi.
            let grey = name == "8-bit" && level == "balanced";
            let want = match (level, grey) {
                (_, true) => 600,
                ("balanced", false) => 1200,
                _ => 800,
            };
            assert_eq!((int(im, "Width"), int(im, "Height")), (want, want), "{name} {level}");
            assert_eq!(int(im, "BitsPerComponent"), if grey { 8 } else { 1 }, "{name} {level}");
            let filters: &[&str] = if grey { &["FlateDecode"] } else { &["CCITTFaxDecode", "FlateDecode"] };
            assert!(filters.contains(&filter(im).as_str()), "{name} {level}");
            assert!(r.output_bytes < r.input_bytes, "{name} {level}");
            assert!(text_of(&out).contains("Hello compress page 1"));
            assert!(qpdf_ok(&out));
        }
    }
}

#[test]
fn a_huge_image_is_kept_without_being_decoded() {
    let scratch = Scratch::new("compress-img-huge");
    // 40000 x 40000 white in CCITT G4: one V0 code (a 1 bit) per row. Decoded at 8 bits
    // it would be 1.6 GB; MuPDF's rewriter took 9 s and 1.3 GB on the corpus's 35000 px one.
    let mut g4 = vec![0xffu8; 40000 / 8];
    g4.extend_from_slice(&[0x00, 0x10, 0x01]);
    let img = stream("/Type /XObject /Subtype /Image /Width 40000 /Height 40000 /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /CCITTFaxDecode /DecodeParms << /K -1 /Columns 40000 /Rows 40000 >>", &g4);
    let pdf = pdf_with(&["q 9600 0 0 9600 0 0 cm /Im1 Do Q"], "/Im1 6 0 R", vec![img]);
    for level in ["balanced", "strong"] {
        let t = std::time::Instant::now();
        let (out, _) = run(&scratch, "huge", &pdf, level);
        assert!(t.elapsed().as_secs_f64() < 5.0, "{level}: {:?}", t.elapsed());
        let im = &images(&out, 0)[0];
        assert_eq!((int(im, "Width"), filter(im).as_str()), (40000, "CCITTFaxDecode"), "{level}");
        assert_eq!(im.read_raw_stream().unwrap(), g4, "{level}: stored bytes kept");
    }
}

#[test]
fn the_xmp_thumbnail_is_dropped_at_lossy_levels_and_kept_at_light() {
    let scratch = Scratch::new("compress-img-xmp");
    let thumb = "A".repeat(30000);
    let xmp = format!(
        "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\" xmlns:xmpGImg=\"http://ns.adobe.com/xap/1.0/g/img/\"><xmp:CreatorTool>Test</xmp:CreatorTool><xmp:Thumbnails><rdf:Alt><rdf:li rdf:parseType=\"Resource\"><xmpGImg:image>{thumb}</xmpGImg:image></rdf:li></rdf:Alt></xmp:Thumbnails></rdf:Description></rdf:RDF></x:xmpmeta>"
    );
    let mut pdf = pdf_with(&[""], "", vec![stream("/Type /Metadata /Subtype /XML", xmp.as_bytes())]);
    // The catalogue points at the metadata (object 6).
    let at = pdf.windows(8).position(|w| w == b"/Pages 2").unwrap();
    pdf.splice(at..at, b"/Metadata 6 0 R ".iter().copied());
    let pdf = build_pdf(&split_objects(&pdf));
    let metadata = |p: &Path| {
        let doc = PdfDocument::open(p.to_str().unwrap()).unwrap();
        let md = doc.catalog().unwrap().get_dict("Metadata").unwrap().unwrap();
        String::from_utf8(md.read_stream().unwrap()).unwrap()
    };
    let (out, _) = run(&scratch, "xmp", &pdf, "light");
    assert!(metadata(&out).contains(&thumb));
    for level in ["balanced", "strong"] {
        let (out, r) = run(&scratch, "xmp", &pdf, level);
        let md = metadata(&out);
        assert!(!md.contains("Thumbnails") && !md.contains(&thumb), "{level}");
        assert!(md.contains("<xmp:CreatorTool>Test</xmp:CreatorTool>"), "{level}: the rest kept");
        assert!(r.output_bytes < 5000, "{level}: {r:?}");
    }
}

/// The object bodies of a PDF written by [`build_pdf`] (offsets recomputed by it again).
fn split_objects(pdf: &[u8]) -> Vec<Vec<u8>> {
    let text = pdf;
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        let head = format!("\n{i} 0 obj\n");
        let Some(start) = text.windows(head.len()).position(|w| w == head.as_bytes()) else { break };
        let body = start + head.len();
        let end = body + text[body..].windows(8).position(|w| w == b"\nendobj\n").unwrap();
        out.push(text[body..end].to_vec());
        i += 1;
    }
    out
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn levels_are_ordered_and_pages_kept_on_the_corpus_scans() {
    for name in ["scanned-typewriter-2400dpi.pdf", "scanned-mixed-3-pages.pdf", "scanned-ccitt-g4.pdf"] {
        let input = corpus_file(name);
        let scratch = Scratch::new("compress-img-scans");
        let mut sizes = Vec::new();
        for level in ["light", "balanced", "strong"] {
            let out = scratch.path(&format!("{level}.pdf"));
            let o = CompressOptions { level: CompressLevel::parse(level).unwrap(), ..Default::default() };
            let r = compress(&input, &out, &o, &JobControl::new()).unwrap();
            assert_eq!(common::qpdf_pages(&out, None), Some(r.page_count), "{name} {level}");
            assert!(qpdf_ok(&out), "{name} {level}");
            sizes.push(r.output_bytes);
        }
        assert!(sizes[2] <= sizes[1] && sizes[1] <= sizes[0], "{name}: {sizes:?}");
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn the_large_flate_scan_of_the_corpus_is_halved() {
    let input = corpus_file("scanned-multipage-assembly.pdf");
    let scratch = Scratch::new("compress-img-corpus");
    let out = scratch.path("assembly.pdf");
    let o = CompressOptions { level: CompressLevel::Balanced, ..Default::default() };
    let r = compress(&input, &out, &o, &JobControl::new()).unwrap();
    assert_eq!(r.page_count, 6);
    assert!(!r.kept_original);
    // Page 2: a 9000 x 9000 flate RGB image at 300 dpi.
    let im = images(&out, 1);
    let big: Vec<_> = im.iter().filter(|i| int(i, "Height") == 4500).collect();
    assert_eq!(big.len(), 1, "the 9000 px image downsampled to 4500");
    assert_eq!(filter(big[0]), "FlateDecode");
    assert!(qpdf_ok(&out));
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn the_image_walk_leaves_form_and_font_resources_intact() {
    // Page 40's figure is a form whose fonts MuPDF's content filter re-resourced even when
    // told not to update the document; the walk now runs on a second opening.
    let input = corpus_file("geotopo-117-pages.pdf");
    let scratch = Scratch::new("compress-img-geotopo");
    let out = scratch.path("geotopo.pdf");
    let o = CompressOptions { level: CompressLevel::Balanced, ..Default::default() };
    compress(&input, &out, &o, &JobControl::new()).unwrap();
    let page40 = |p: &Path| {
        let o = common::tool("pdftotext").args(["-f", "40", "-l", "40"]).arg(p).arg("-").output().unwrap();
        (String::from_utf8_lossy(&o.stdout).split_whitespace().count(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (before, _) = page40(&input);
    let (after, errors) = page40(&out);
    assert_eq!(after, before);
    assert!(!errors.contains("Error"), "{errors}");
}

#[test]
fn an_owner_password_file_is_compressed_and_stays_encrypted() {
    let scratch = Scratch::new("compress-img-encrypted");
    let img = stream("/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode", &jpeg(1200, 1200, 3));
    let pdf = pdf_with(&[AT_300], "/Im1 6 0 R", vec![img]);
    let plain = scratch.path("plain.pdf");
    std::fs::write(&plain, &pdf).unwrap();
    let enc = scratch.path("enc.pdf");
    let ok = common::tool("qpdf")
        .args(["--encrypt", "", "owner-secret", "256", "--"])
        .arg(&plain)
        .arg(&enc)
        .status()
        .unwrap();
    assert!(ok.success());
    let (out_plain, _) = run(&scratch, "plain", &pdf, "balanced");
    let (out_enc, r) = run(&scratch, "enc", &std::fs::read(&enc).unwrap(), "balanced");
    assert!(!r.kept_original);
    let shown = common::tool("qpdf").arg("--show-encryption").arg(&out_enc).output().unwrap();
    assert!(String::from_utf8_lossy(&shown.stdout).contains("R = 6"), "still AES-256 encrypted");
    assert_eq!(int(&images(&out_enc, 0)[0], "Width"), 600);
    // The re-encoded image decrypts and decodes to the same pixels as without encryption.
    let render = |p: &Path, name: &str| {
        let o = scratch.path(name);
        assert!(common::tool("mutool")
            .args(["draw", "-q", "-r", "30", "-c", "gray", "-o"])
            .arg(&o)
            .arg(p)
            .arg("1")
            .status()
            .unwrap()
            .success());
        std::fs::read(o).unwrap()
    };
    assert_eq!(render(&out_enc, "e.pgm"), render(&out_plain, "p.pgm"));
}

/// The (width, height) of every image XObject of the PDF at `path`.
fn image_sizes(path: &Path) -> Vec<(i32, i32)> {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let mut sizes = Vec::new();
    for num in 1..doc.xref_len().unwrap() as i32 {
        let Ok(Some(o)) = doc.new_indirect(num, 0).and_then(|r| r.resolve()) else { continue };
        if o.get_dict("Subtype").ok().flatten().is_some_and(|s| s.as_name().unwrap_or_default() == b"Image") {
            sizes.push((int(&o, "Width"), int(&o, "Height")));
        }
    }
    sizes.sort();
    sizes
}

#[test]
fn images_reached_only_through_inherited_resources_forms_and_annotations_are_downsampled() {
    // Page 1 draws nothing but text. Page 2 has no /Resources of its own: its form comes
    // from the page tree's, and the form names the image. Page 3's content is text, its
    // annotation's appearance draws a second image. The image walk skips pages that
    // cannot reach an image, so it must still find both of these.
    let scratch = Scratch::new("compress-img-reach");
    let form = "q 288 0 0 288 100 400 cm /Im1 Do Q";
    let ap = "q 288 0 0 288 0 0 cm /Im2 Do Q";
    let text = "BT /F1 12 Tf 72 72 Td (Hello) Tj ET";
    // Two different images (identical ones would be merged into one).
    let img = |comps: u32, space: &str| {
        let dict = format!("/Type /XObject /Subtype /Image /Width 1200 /Height 1200 /ColorSpace /{space} /BitsPerComponent 8 /Filter /DCTDecode");
        stream(&dict, &jpeg(1200, 1200, comps))
    };
    let own = "/Resources << /Font << /F1 7 0 R >> >>";
    let objects = vec![
        obj("<< /Type /Catalog /Pages 2 0 R >>"),
        obj("<< /Type /Pages /Kids [3 0 R 5 0 R 13 0 R] /Count 3 /Resources << /Font << /F1 7 0 R >> /XObject << /Fm1 8 0 R >> >> >>"),
        obj(&format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R {own} >>")),
        stream("", text.as_bytes()),
        obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 6 0 R >>"),
        stream("", format!("q /Fm1 Do Q {text}").as_bytes()),
        obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
        stream("/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /Im1 9 0 R >> >>", form.as_bytes()),
        img(3, "DeviceRGB"),
        obj("<< /Type /Annot /Subtype /Square /Rect [100 100 388 388] /AP << /N 11 0 R >> >>"),
        stream("/Type /XObject /Subtype /Form /BBox [0 0 288 288] /Resources << /XObject << /Im2 12 0 R >> >>", ap.as_bytes()),
        img(1, "DeviceGray"),
        obj(&format!("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 14 0 R {own} /Annots [10 0 R] >>")),
        stream("", text.as_bytes()),
    ];
    let pdf = build_pdf(&objects);
    let (out, r) = run(&scratch, "reach", &pdf, "balanced");
    assert!(!r.kept_original, "{r:?}");
    assert_eq!(image_sizes(&out), vec![(600, 600), (600, 600)], "both images used at 300 dpi halved");
}

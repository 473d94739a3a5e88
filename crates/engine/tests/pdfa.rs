//! PDF/A-2b searchable PDFs (engine::ocr::pdfa; docs/ocr.md, "PDF/A-2b"): what is refused
//! (each kind of problem, named with where it is), and what a PDF/A-2b searchable PDF carries
//! (the sRGB output intent, XMP identification equal to the Info dictionary, an /ID, a 1.x
//! header, embedded fonts, no encryption, the text layer's CIDs never shown as .notdef). The
//! rule-by-rule check of the whole file is test/support/pdfa-check.ts, run by
//! test/api/ocr-pdfa.test.ts over HTTP.

use std::time::{Duration, UNIX_EPOCH};

use engine::ocr::pdfa::{convert, problems, PdfaLevel};
use engine::ocr::pipeline::{apply_text_layer, ocr_document, ocr_layer_pages, OcrOptions, OcrOutput};
use engine::{ErrorCode, JobControl};
use mupdf::pdf::{PdfDocument, PdfWriteOptions};
use mupdf::Buffer;

mod common;
use common::{corpus_file, init_ocr, qpdf_check, qpdf_ok, tool, Scratch};

/// A one-page document whose page content is `content` and whose resources are `resources`
/// (PDF syntax), with the catalog entry `catalog_entry` (key, value) when given.
fn document(content: &str, resources: &str, catalog_entry: Option<(&str, &str)>) -> PdfDocument {
    let mut doc = PdfDocument::new();
    let stream = doc.add_stream(&Buffer::from_bytes(content.as_bytes()).unwrap(), None, false).unwrap();
    let mut catalog = doc.catalog().unwrap();
    let mut pages = catalog.get_dict("Pages").unwrap().unwrap();
    let mut page = doc.new_object_from_str("<< /Type /Page /MediaBox [0 0 200 200] >>").unwrap();
    page.dict_put("Contents", stream).unwrap();
    page.dict_put("Resources", doc.new_object_from_str(resources).unwrap()).unwrap();
    page.dict_put("Parent", pages.clone()).unwrap();
    let page = doc.add_object(&page).unwrap();
    let mut kids = doc.new_array().unwrap();
    kids.array_push(page).unwrap();
    pages.dict_put("Kids", kids).unwrap();
    pages.dict_put("Count", doc.new_int(1).unwrap()).unwrap();
    if let Some((key, value)) = catalog_entry {
        catalog.dict_put(key, doc.new_object_from_str(value).unwrap()).unwrap();
    }
    doc
}

fn saved(doc: &PdfDocument, scratch: &Scratch, name: &str) -> std::path::PathBuf {
    let path = scratch.path(name);
    let mut opts = PdfWriteOptions::default();
    opts.set_garbage_level(2).set_compress(true);
    doc.save_with_options(path.to_str().unwrap(), opts).unwrap();
    path
}

const HELVETICA: &str = "<< /Font << /F1 << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> >> >>";

#[test]
fn each_kind_of_problem_pdfa_2b_forbids_is_named_with_where_it_is() {
    let cases: &[(&str, &str, Option<(&str, &str)>, &str)] = &[
        ("BT /F1 12 Tf (x) Tj ET", HELVETICA, None, "fonts that are not embedded (page 1, font Helvetica)"),
        ("0 0 0 1 k 0 0 10 10 re f", "<< >>", None, "DeviceCMYK colour with an sRGB output intent (page 1)"),
        (
            "",
            "<< >>",
            Some(("Names", "<< /JavaScript << /Names [(a) << /S /JavaScript /JS (app.alert(1)) >>] >> >>")),
            "JavaScript (the document's name tree)",
        ),
        ("", "<< >>", Some(("OpenAction", "<< /S /Launch /F (calc.exe) >>")), "Launch actions (the open action)"),
        (
            "",
            "<< >>",
            Some(("AA", "<< /WC << /S /JavaScript /JS (x) >> >>")),
            "additional actions (/AA) (the document catalog)",
        ),
        ("", "<< /ExtGState << /G1 << /BM /Glow >> >> >>", None, "blend modes PDF/A does not allow (page 1, /Glow)"),
        (
            "",
            "<< >>",
            Some(("Names", "<< /EmbeddedFiles << /Names [] >> >>")),
            "embedded files (the document's name tree)",
        ),
    ];
    for (content, resources, catalog, want) in cases {
        let doc = document(content, resources, *catalog);
        assert_eq!(problems(&doc).unwrap(), vec![want.to_string()], "{content} {resources} {catalog:?}");
    }
    let clean = document("q 1 0 0 rg 0 0 10 10 re f Q", "<< >>", None);
    assert_eq!(problems(&clean).unwrap(), Vec::<String>::new());
}

#[test]
fn a_converted_document_carries_the_srgb_intent_xmp_equal_to_info_and_an_id() {
    let scratch = Scratch::new("pdfa-convert");
    let mut doc = document("q 1 0 0 rg 0 0 10 10 re f Q", "<< >>", None);
    let mut trailer = doc.trailer().unwrap();
    let info = doc
        .new_object_from_str("<< /Title (Caf\\351 <&> report) /Author (A. Writer) /CreationDate (D:20200102030405+01'00') /Trapped /True >>")
        .unwrap();
    trailer.dict_put("Info", info).unwrap();
    // An image and its soft mask, both asking for interpolation.
    let image = "<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray \
                 /BitsPerComponent 8 /Interpolate true >>";
    let mask =
        doc.add_stream(&Buffer::from_bytes(&[200]).unwrap(), Some(&doc.new_object_from_str(image).unwrap()), false);
    let mut dict = doc.new_object_from_str(image).unwrap();
    dict.dict_put("SMask", mask.unwrap()).unwrap();
    let img = doc.add_stream(&Buffer::from_bytes(&[100]).unwrap(), Some(&dict), false).unwrap();
    let mut xobjects = doc.new_dict().unwrap();
    xobjects.dict_put("Im0", img).unwrap();
    let page = doc.find_page(0).unwrap();
    page.get_dict("Resources").unwrap().unwrap().dict_put("XObject", xobjects).unwrap();
    let now = UNIX_EPOCH + Duration::from_secs(1_709_251_199); // 2024-02-29T23:59:59Z
    convert(&mut doc, PdfaLevel::A2b, now).unwrap();
    let path = saved(&doc, &scratch, "out.pdf");
    assert!(qpdf_ok(qpdf_check(&path, None)));

    let bytes = std::fs::read(&path).unwrap();
    assert!(bytes.starts_with(b"%PDF-1.7\n"), "{:?}", &bytes[..9]);
    let out = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let trailer = out.trailer().unwrap();
    let id = trailer.get_dict("ID").unwrap().unwrap();
    assert_eq!(id.len().unwrap(), 2);
    assert_eq!(id.get_array(0).unwrap().unwrap().as_bytes().unwrap().len(), 16);

    let page = out.find_page(0).unwrap();
    let xobjects = page.get_dict("Resources").unwrap().unwrap().get_dict("XObject").unwrap().unwrap();
    let img = xobjects.get_dict("Im0").unwrap().unwrap();
    assert!(img.get_dict("Interpolate").unwrap().is_none(), "the image's /Interpolate is removed");
    let mask = img.get_dict("SMask").unwrap().unwrap();
    assert!(mask.get_dict("Interpolate").unwrap().is_none(), "its soft mask's too");

    let catalog = out.catalog().unwrap();
    let intents = catalog.get_dict("OutputIntents").unwrap().unwrap();
    assert_eq!(intents.len().unwrap(), 1);
    let intent = intents.get_array(0).unwrap().unwrap();
    assert_eq!(intent.get_dict("S").unwrap().unwrap().as_name().unwrap(), b"GTS_PDFA1");
    let profile = intent.get_dict("DestOutputProfile").unwrap().unwrap();
    assert_eq!(profile.get_dict("N").unwrap().unwrap().as_int().unwrap(), 3);
    let icc = profile.read_stream().unwrap();
    assert_eq!(&icc[36..40], b"acsp", "an ICC profile");
    assert_eq!(&icc[16..20], b"RGB ");

    let metadata = catalog.get_dict("Metadata").unwrap().unwrap();
    assert!(metadata.get_dict("Filter").unwrap().is_none(), "XMP is written unfiltered");
    let xmp = String::from_utf8(metadata.read_raw_stream().unwrap()).unwrap();
    for want in [
        "<pdfaid:part>2</pdfaid:part>",
        "<pdfaid:conformance>B</pdfaid:conformance>",
        "<rdf:li xml:lang=\"x-default\">Café &lt;&amp;&gt; report</rdf:li>",
        "<rdf:li>A. Writer</rdf:li>",
        "<pdf:Producer>docproc</pdf:Producer>",
        "<xmp:CreateDate>2020-01-02T03:04:05+01:00</xmp:CreateDate>",
        "<xmp:ModifyDate>2024-02-29T23:59:59+00:00</xmp:ModifyDate>",
    ] {
        assert!(xmp.contains(want), "{want} in {xmp}");
    }
    assert!(xmp.starts_with("<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>"));
    let info = trailer.get_dict("Info").unwrap().unwrap();
    let text = |k: &str| info.get_dict(k).unwrap().map(|v| v.as_string().unwrap());
    assert_eq!(text("Title").as_deref(), Some("Café <&> report"));
    assert_eq!(text("Producer").as_deref(), Some("docproc"));
    assert_eq!(text("CreationDate").as_deref(), Some("D:20200102030405+01'00'"));
    assert_eq!(text("ModDate").as_deref(), Some("D:20240229235959+00'00'"));
    assert!(info.get_dict("Trapped").unwrap().is_none(), "an entry without its XMP twin is dropped");
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn a_pdfa_searchable_pdf_of_a_scan_embeds_every_font_and_shows_no_notdef() {
    init_ocr();
    let scratch = Scratch::new("pdfa-scan");
    let out = scratch.path("out.pdf");
    let options = OcrOptions { output: OcrOutput::SearchablePdf, pdfa: Some(PdfaLevel::A2b), ..Default::default() };
    ocr_document(&corpus_file("scanned-mixed-3-pages.pdf"), Some(&out), &options, &JobControl::new()).unwrap();
    assert!(qpdf_ok(qpdf_check(&out, None)));
    let fonts = tool("pdffonts").arg(&out).output().unwrap();
    let listing = String::from_utf8_lossy(&fonts.stdout);
    let rows: Vec<&str> = listing.lines().skip(2).collect();
    assert!(!rows.is_empty(), "{listing}");
    for row in rows {
        let cols: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cols[cols.len() - 5], "yes", "embedded: {row}");
    }
    let doc = PdfDocument::open(out.to_str().unwrap()).unwrap();
    assert!(doc.catalog().unwrap().get_dict("OutputIntents").unwrap().is_some());
    // The text layer's CIDs (1..) all map to glyph 1 of its font, none to .notdef.
    let page = doc.find_page(0).unwrap();
    let font = page.get_dict_inheritable("Resources").unwrap().unwrap().get_dict("Font").unwrap().unwrap();
    let type0 = font.get_dict_val(0).unwrap().unwrap();
    let cid_font = type0.get_dict("DescendantFonts").unwrap().unwrap().get_array(0).unwrap().unwrap();
    let map = cid_font.get_dict("CIDToGIDMap").unwrap().unwrap().read_stream().unwrap();
    assert!(map.len() > 4 && map.len() % 2 == 0);
    assert_eq!(&map[..2], &[0, 0]);
    assert!(map[2..].chunks(2).all(|g| g == [0, 1]), "every CID in use shows glyph 1");
    // The same document as a page-parallel job's two steps: the same PDF/A structure.
    let (_, layer) = ocr_layer_pages(&corpus_file("scanned-mixed-3-pages.pdf"), &options, &JobControl::new()).unwrap();
    let split = scratch.path("split.pdf");
    apply_text_layer(
        &corpus_file("scanned-mixed-3-pages.pdf"),
        &split,
        &layer,
        Some(PdfaLevel::A2b),
        Default::default(),
        &JobControl::new(),
    )
    .unwrap();
    let split_doc = PdfDocument::open(split.to_str().unwrap()).unwrap();
    assert!(split_doc.catalog().unwrap().get_dict("Metadata").unwrap().is_some());
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn a_document_with_a_font_that_is_not_embedded_is_refused_before_any_page_is_read() {
    init_ocr();
    let scratch = Scratch::new("pdfa-refused");
    let input =
        saved(&document("BT /F1 12 Tf 10 10 Td (Hello there, world) Tj ET", HELVETICA, None), &scratch, "in.pdf");
    let options = OcrOptions { output: OcrOutput::SearchablePdf, pdfa: Some(PdfaLevel::A2b), ..Default::default() };
    let control = JobControl::new();
    let err = ocr_document(&input, Some(&scratch.path("out.pdf")), &options, &control).unwrap_err();
    assert_eq!(err.code, ErrorCode::PdfaUnsupported);
    assert!(err.message.contains("fonts that are not embedded (page 1, font Helvetica)"), "{}", err.message);
    assert!(!scratch.path("out.pdf").exists());
    // The tasks of a page-parallel job refuse it too, before reading.
    let err = ocr_layer_pages(&input, &options, &control).unwrap_err();
    assert_eq!(err.code, ErrorCode::PdfaUnsupported);
}

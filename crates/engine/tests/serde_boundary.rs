//! The engine's option structs read a POST /jobs options object as it is (the API's snake_case
//! names, serde), refuse a field they do not take, and never read the process's settings from
//! one; its result structs serialize under their field names. This is the whole contract of the
//! Node addon (engine-node), which restates no struct.

use std::time::Duration;

use engine::convert::docx::PdfToDocxOptions;
use engine::convert::sheets::{CsvToXlsxOptions, SheetSelector, XlsxToCsvOptions};
use engine::ocr::pipeline::{OcrInit, OcrOptions, OcrOutput, PdfaLevel};
use engine::pagework::compress::{CompressLevel, CompressOptions, CompressPath, CompressResult, ImagePass};
use engine::pagework::redact::RedactOptions;
use engine::pagework::render::{JpegEncoder, RenderOptions};
use engine::{PageOpResult, ProtectOptions, RotateOptions, SplitMode, SplitOptions, UnlockOptions};
use serde::de::DeserializeOwned;
use serde_json::json;

fn read<T: DeserializeOwned>(value: serde_json::Value) -> Result<T, String> {
    serde_json::from_value(value).map_err(|e| e.to_string())
}

#[test]
fn options_deserialize_from_the_api_names() {
    let r: RotateOptions = read(json!({"degrees": 90, "pages": [0, 2]})).unwrap();
    assert_eq!((r.degrees, r.pages, r.max_pages), (90, Some(vec![0, 2]), None));

    let s: SplitOptions = read(json!({"mode": "ranges", "ranges": [[1, 2], [3, 3]]})).unwrap();
    assert_eq!((s.mode, s.ranges, s.chunk_size), (SplitMode::Ranges, Some(vec![(1, 2), (3, 3)]), None));
    let s: SplitOptions = read(json!({"mode": "chunks", "chunk_size": 2})).unwrap();
    assert_eq!((s.mode, s.chunk_size), (SplitMode::Chunks, Some(2)));
    assert_eq!(read::<SplitOptions>(json!({})).unwrap().mode, SplitMode::EveryPage);

    let p: ProtectOptions =
        read(json!({"user_password": "u", "owner_password": "o", "allow_print": false, "allow_copy": true})).unwrap();
    assert_eq!((p.user_password.as_deref(), p.owner_password.as_deref()), (Some("u"), Some("o")));
    assert_eq!((p.allow_print, p.allow_modify, p.allow_copy), (Some(false), None, Some(true)));
    assert_eq!(read::<UnlockOptions>(json!({"password": "pw"})).unwrap().password.as_deref(), Some("pw"));

    let x: XlsxToCsvOptions = read(json!({"sheet": 2})).unwrap();
    assert_eq!((x.sheet, x.delimiter), (Some(SheetSelector::Index(2)), ','));
    let x: XlsxToCsvOptions = read(json!({"sheet": "Data", "delimiter": ";"})).unwrap();
    assert_eq!((x.sheet, x.delimiter), (Some(SheetSelector::Name("Data".into())), ';'));
    let c: CsvToXlsxOptions = read(json!({"has_header": true, "sheet_name": "T"})).unwrap();
    assert_eq!((c.delimiter, c.has_header, c.sheet_name.as_deref()), (None, true, Some("T")));
    let d: PdfToDocxOptions = read(json!({"pages": [1]})).unwrap();
    assert_eq!((d.pages, d.ocr), (Some(vec![1]), false));

    let o: OcrOptions = read(json!({
        "output": "searchable_pdf", "pages": [0], "languages": ["eng"], "pdfa": "2b",
        "rotate_pages": true, "deskew": false, "page_timeout_s": 2.5
    }))
    .unwrap();
    assert_eq!(
        (o.output, o.pdfa, o.page_timeout),
        (OcrOutput::SearchablePdf, Some(PdfaLevel::A2b), Some(Duration::from_millis(2500)))
    );
    assert_eq!((o.turn().rotate_pages, o.turn().deskew), (true, false));
    let o: OcrOptions = read(json!({"page_timeout_s": 0})).unwrap();
    assert_eq!((o.output, o.page_timeout), (OcrOutput::Blocks, None));
}

#[test]
fn a_field_the_struct_does_not_take_or_a_value_of_the_wrong_type_is_refused() {
    for (what, refused) in [
        ("unknown field", read::<RotateOptions>(json!({"degrees": 90, "page": [0]})).err()),
        ("camelCase name", read::<SplitOptions>(json!({"mode": "chunks", "chunkSize": 2})).err()),
        ("planning-only field", read::<RenderOptions>(json!({"target": "jpg"})).err()),
        ("fraction for an integer", read::<RotateOptions>(json!({"degrees": 90.5})).err()),
        ("negative dpi", read::<RenderOptions>(json!({"dpi": -1})).err()),
        ("quality over a byte", read::<RenderOptions>(json!({"quality": 300})).err()),
        ("unknown split mode", read::<SplitOptions>(json!({"mode": "halves"})).err()),
        ("three-number range", read::<SplitOptions>(json!({"ranges": [[1, 2, 3]]})).err()),
        ("two-character delimiter", read::<XlsxToCsvOptions>(json!({"delimiter": ";;"})).err()),
        ("negative sheet", read::<XlsxToCsvOptions>(json!({"sheet": -1})).err()),
        ("unknown OCR output", read::<OcrOptions>(json!({"output": "txt"})).err()),
        ("unknown PDF/A level", read::<OcrOptions>(json!({"pdfa": "1b"})).err()),
        (
            "region field",
            read::<RedactOptions>(json!({"regions": [{"page": 0, "x": 0, "y": 0, "w": 1, "h": 1, "r": 1}]})).err(),
        ),
        ("missing required field", read::<RotateOptions>(json!({"pages": [0]})).err()),
        ("unknown level", read::<CompressOptions>(json!({"level": "max"})).err()),
    ] {
        assert!(refused.is_some(), "{what} was accepted");
    }
}

#[test]
fn settings_are_never_read_from_an_options_object() {
    // The fields that are settings of the process keep their defaults, and naming one is an
    // unknown field, not a way around `configure`.
    let c: CompressOptions = read(json!({"level": "strong"})).unwrap();
    assert_eq!(c.level, CompressLevel::Strong);
    assert!(c.subset_fonts && !c.guard_always && c.images == ImagePass::Engine);
    assert_eq!(read::<CompressOptions>(json!({})).unwrap().level, CompressLevel::Balanced);
    assert!(read::<CompressOptions>(json!({"subset_fonts": false})).is_err());
    assert_eq!(read::<RenderOptions>(json!({"dpi": 72})).unwrap().jpeg_encoder, JpegEncoder::Auto);
    assert!(read::<RenderOptions>(json!({"jpeg_encoder": "rust"})).is_err());
    let init: OcrInit = read(json!({"ort_library": "/o.so", "manifest": "/m.json", "model_root": "/r"})).unwrap();
    assert_eq!((init.intra_threads, init.det_max_side), (1, None));
    assert!(read::<OcrInit>(json!({"ort_library": "/o", "manifest": "/m", "model_root": "/r", "tuning": {}})).is_err());
}

#[test]
fn results_serialize_under_their_field_names() {
    let r = PageOpResult { pages_processed: 3, page_count: 2, output_bytes: 5_000_000_000 };
    assert_eq!(
        serde_json::to_value(r).unwrap(),
        json!({"pages_processed": 3, "page_count": 2, "output_bytes": 5_000_000_000u64})
    );
    let c = CompressResult {
        page_count: 1,
        input_bytes: 10,
        output_bytes: 9,
        kept_original: false,
        path: CompressPath::OwnImagePassOnly,
    };
    assert_eq!(serde_json::to_value(c).unwrap()["path"], json!(CompressPath::OwnImagePassOnly.as_str()));
    let unknown = std::env::temp_dir().join(format!("serde-boundary-{}.bin", std::process::id()));
    std::fs::write(&unknown, [0u8, 0x9f, 0x92, 0x96, 0x00, 0x01]).unwrap();
    let id = engine::identify(&unknown).unwrap();
    std::fs::remove_file(&unknown).unwrap();
    assert_eq!(
        serde_json::to_value(id).unwrap(),
        json!({"kind": "unknown", "page_count": null, "encrypted": false, "password_required": false})
    );
}

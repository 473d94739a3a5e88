//! light is lossless and never larger than qpdf's lossless packing (`--object-streams=generate
//! --recompress-flate --compression-level=9`), on corpus files where MuPDF's writer alone
//! was larger: small born-digital files (catalogue and Info outside object streams, an xref
//! stream without predictor: src/compress/repack.rs), scans, and an image that deflates
//! smaller without its PNG predictor (chart-slanted-text.pdf).

mod common;

use common::{corpus_file, Scratch};
use engine::pagework::compress::{compress, CompressLevel, CompressOptions};
use engine::JobControl;

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn light_is_not_larger_than_qpdf_objstm_flate9() {
    let s = Scratch::new("light-vs-qpdf");
    let mut larger = Vec::new();
    for name in [
        "rotated-page-attribute.pdf",
        "pdf20-utf8-test.pdf",
        "pdfa-crazyones.pdf",
        "damaged-append-page-content.pdf",
        "scanned-huckfinn-page.pdf",
        "scanned-ccitt-g4.pdf",
        "scanned-jbig2.pdf",
        "chart-slanted-text.pdf",
    ] {
        let input = corpus_file(name);
        let (ours, theirs) = (s.path("ours.pdf"), s.path("qpdf.pdf"));
        let r = compress(
            &input,
            &ours,
            &CompressOptions { level: CompressLevel::Light, max_pages: None, ..Default::default() },
            &JobControl::new(),
        )
        .unwrap_or_else(|e| panic!("{name}: {e:?}"));
        let st = common::tool("qpdf")
            .args(["--object-streams=generate", "--recompress-flate", "--compression-level=9"])
            .arg(&input)
            .arg(&theirs)
            .status()
            .unwrap();
        assert!(matches!(st.code(), Some(0) | Some(3)), "qpdf on {name}");
        let q = std::fs::metadata(&theirs).unwrap().len();
        // The repacked output must stay valid for an independent reader.
        assert!(common::qpdf_ok(common::qpdf_check(&ours, None)), "qpdf --check of light's {name}");
        if r.output_bytes > q {
            larger.push(format!("{name}: {} > {q}", r.output_bytes));
        }
    }
    assert!(larger.is_empty(), "light larger than qpdf on: {}", larger.join(", "));
}

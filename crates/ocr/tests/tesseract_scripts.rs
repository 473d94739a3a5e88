//! Tesseract, the recogniser of the scripts the ONNX models do not read, on a generated page
//! per script family (crates/script_pages.rs): each reads within its CER bound with the layout
//! `tesseract::layout_for` chooses for a level page, and that layout reads no script worse than
//! the other one on these clean level pages (both CERs are printed; the choice for turned,
//! noisy pages is measured on the tune half of the OCR language set by
//! scripts/bench/ocr-tess-layout.ts). Orientation and script
//! detection name each page's script, and a page turned sideways or upside down is read
//! upright.
use std::time::Duration;

use ocr::tesseract::{layout_for, Layout, TessPage};

mod common;
#[path = "../../script_pages.rs"]
mod script_pages;
use script_pages::{ScriptPage, ALL};

const DPI: u32 = 200;

fn scratch(label: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ocr-tess-{}-{label}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn load(path: &std::path::Path) -> ocr::Image {
    let img = image::open(path).unwrap().to_luma8();
    let (w, h) = img.dimensions();
    ocr::Image::new(w as usize, h as usize, 1, img.into_raw()).unwrap()
}

fn read(e: &ocr::Ocr, page: &ocr::Image, p: &ScriptPage, layout: Option<Layout>) -> ocr::tesseract::TessRead {
    let languages = vec![p.language.to_string()];
    e.recognise_tesseract(
        page,
        &TessPage {
            languages: &languages,
            dpi: DPI as f32,
            timeout: Duration::from_secs(120),
            cancel: &|| false,
            layout,
            osd: None,
        },
    )
    .unwrap()
}

/// CER bound per family on these clean 200-dpi pages (measured: docs/ocr.md, "Tesseract").
fn bound(p: &ScriptPage) -> f64 {
    match p.family {
        "Thai" | "Devanagari" => 0.05,
        _ => 0.03,
    }
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn every_script_family_reads_within_its_bound_and_the_chosen_layout_is_the_better_one() {
    let e = common::engine();
    let dir = scratch("families");
    let mut failures = Vec::new();
    for p in ALL {
        let page = load(&script_pages::render(&dir, p, DPI, 0));
        let own = read(&e, &page, p, Some(Layout::Tesseract));
        let lines = read(&e, &page, p, Some(Layout::Detector));
        let cer_own = script_pages::cer(p.text, &own.page.text());
        let cer_lines = script_pages::cer(p.text, &lines.page.text());
        // The pages are level: a layout that depends on it uses our detector's lines.
        let chosen = match layout_for(&[p.language.to_string()]) {
            Layout::DetectorWhenLevel => Layout::Detector,
            l => l,
        };
        let (cer_chosen, cer_other) =
            if chosen == Layout::Tesseract { (cer_own, cer_lines) } else { (cer_lines, cer_own) };
        eprintln!(
            "{:<10} Tesseract layout CER {:>5.2}%  detector lines CER {:>5.2}%  (chosen: {chosen:?})",
            p.family,
            cer_own * 100.0,
            cer_lines * 100.0
        );
        if cer_chosen > bound(p) {
            failures.push(format!(
                "{}: CER {:.2}% over {:.0}%: {}",
                p.family,
                cer_chosen * 100.0,
                bound(p) * 100.0,
                own.page.text()
            ));
        }
        if cer_chosen > cer_other + 0.005 {
            failures.push(format!(
                "{}: the layout not chosen reads better ({:.2}% vs {:.2}%)",
                p.family,
                cer_other * 100.0,
                cer_chosen * 100.0
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn script_detection_names_the_script_of_the_families_osd_knows() {
    let e = common::engine();
    let dir = scratch("osd");
    // Tesseract's OSD (osd.traineddata, legacy engine) names Thai pages Latin with confidence 0
    // (as `tesseract --psm 0` does), and through the library finds no Devanagari blobs to judge
    // by: those pages are unsure or undetected, and without `languages` read by the default
    // recogniser (docs/ocr.md, "Languages").
    for p in ALL.iter().filter(|p| !["Thai", "Devanagari"].contains(&p.family)) {
        let page = load(&script_pages::render(&dir, p, DPI, 0));
        let osd = e.detect_script(&page, DPI as f32).unwrap();
        let osd = osd.unwrap_or_else(|| panic!("{}: OSD is installed and the page has text", p.family));
        eprintln!("{:<10} {osd:?}", p.family);
        assert_eq!(osd.script, p.osd_script, "{}: {osd:?}", p.family);
        assert!(osd.script_confidence >= ocr::tesseract::SCRIPT_SURE_FROM, "{}: unsure: {osd:?}", p.family);
        assert_eq!(osd.orientation, 0, "{}: {osd:?}", p.family);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[cfg_attr(
    not(all(has_ocr_models, has_tessdata_scripts)),
    ignore = "OCR models or Tesseract traineddata missing: run scripts/setup.sh"
)]
fn a_page_turned_90_180_or_270_degrees_is_read_upright_under_the_machine_lock() {
    let dir = scratch("turned");
    // The service's setting: every model run and every Tesseract page under the machine-wide
    // lock (the detector's run and Tesseract's must not nest).
    let e = ocr::Ocr::new(&common::config(2, Some(dir.join("machine.lock")))).unwrap();
    let p = &script_pages::CYRILLIC;
    for turn in [90, 180, 270] {
        let page = load(&script_pages::render(&dir, p, DPI, turn));
        let r = read(&e, &page, p, None);
        // The page was turned clockwise by `turn`; turning it back is the rest of the circle.
        assert_eq!(r.page.rotation, (360 - turn) % 360, "turned {turn}: {:?}", r.osd);
        let cer = script_pages::cer(p.text, &r.page.text());
        assert!(cer <= bound(p), "turned {turn}: CER {:.2}%: {}", cer * 100.0, r.page.text());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

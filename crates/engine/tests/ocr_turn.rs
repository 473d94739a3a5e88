//! The searchable PDF's `rotate_pages` and `deskew` (engine::ocr::turn) on corpus scans: each
//! output is rendered (pdftoppm) and read again, so what is checked is what a viewer shows.

use std::path::{Path, PathBuf};

use engine::ocr::pipeline::{ocr_document, ocr_layer_pages, LayerPage, OcrOptions, OcrOutput, PageTurn};
use engine::ocr::turn::user_space_skew;
use engine::JobControl;

mod common;
use common::{corpus_file, init_ocr, tool, Scratch};

/// Render resolution of the outputs read back.
const DPI: f32 = 100.0;

fn searchable(input: &Path, output: &Path, turn: PageTurn) -> serde_json::Value {
    let options = OcrOptions {
        output: OcrOutput::SearchablePdf,
        rotate_pages: turn.rotate_pages,
        deskew: turn.deskew,
        ..Default::default()
    };
    let r = ocr_document(input, Some(output), &options, &JobControl::new()).unwrap();
    serde_json::from_str(&r.json).unwrap()
}

/// Renders every page of `pdf` to a PNG at [`DPI`], in page order.
fn render(scratch: &Scratch, pdf: &Path, label: &str) -> Vec<PathBuf> {
    let prefix = scratch.path(label);
    let status = tool("pdftoppm").args(["-r", &DPI.to_string(), "-gray", "-png"]).arg(pdf).arg(&prefix).status();
    assert!(status.unwrap().success());
    let mut pngs: Vec<PathBuf> = std::fs::read_dir(&scratch.0)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(&format!("{label}-")))
        .collect();
    pngs.sort();
    pngs
}

/// A rendered page read again: its recognition in raster pixels, and the pixel -> point scales.
fn read_back(png: &Path) -> LayerPage {
    let options = OcrOptions { output: OcrOutput::Blocks, ..Default::default() };
    let (_, mut layer) = ocr_layer_pages(png, &options, &JobControl::new()).unwrap();
    assert_eq!(layer.len(), 1, "{} was read", png.display());
    layer.remove(0)
}

/// `/Rotate` of each page.
fn rotations(pdf: &Path) -> Vec<i64> {
    let doc = common::open(pdf);
    (0..doc.page_count().unwrap())
        .map(|i| {
            let page = doc.find_page(i).unwrap();
            page.get_dict_inheritable("Rotate").unwrap().map_or(0, |r| r.as_int().unwrap() as i64)
        })
        .collect()
}

/// Words of the text layer with their boxes on the displayed page (`pdftotext -bbox`, points).
fn layer_words(pdf: &Path, page: usize) -> Vec<(String, [f32; 4])> {
    let n = (page + 1).to_string();
    let out = tool("pdftotext").args(["-bbox", "-f", &n, "-l", &n]).arg(pdf).arg("-").output().unwrap();
    let html = String::from_utf8(out.stdout).unwrap();
    let attr = |line: &str, name: &str| -> f32 {
        let at = line.find(&format!("{name}=\"")).unwrap() + name.len() + 2;
        line[at..].split('"').next().unwrap().parse().unwrap()
    };
    html.lines()
        .filter(|l| l.trim_start().starts_with("<word "))
        .map(|l| {
            let text = l[l.find('>').unwrap() + 1..l.rfind("</word>").unwrap()].to_string();
            (text, [attr(l, "xMin"), attr(l, "yMin"), attr(l, "xMax"), attr(l, "yMax")])
        })
        .collect()
}

/// How far (points) the layer's words are from where the rendered page prints them: for
/// each word read back from the rendering that the layer has once, the distance between
/// the two boxes' centres; the 90th percentile (1.7-2.2 pt here; a layer left unturned on a
/// page drawn straight was 10 pt off).
fn layer_offset(pdf: &Path, page: usize, printed: &LayerPage) -> f32 {
    let layer = layer_words(pdf, page);
    let [sx, sy] = printed.scale;
    let mut distances: Vec<f32> = printed
        .text
        .blocks
        .iter()
        .flat_map(|b| &b.lines)
        .flat_map(|l| &l.words)
        .filter(|w| w.text.chars().count() >= 4)
        .filter_map(|w| {
            let same: Vec<_> = layer.iter().filter(|(t, _)| *t == w.text).collect();
            let [(_, b)] = same[..] else { return None };
            let (cx, cy) = ((w.bbox[0] + w.bbox[2]) / 2.0 * sx, (w.bbox[1] + w.bbox[3]) / 2.0 * sy);
            Some(((b[0] + b[2]) / 2.0 - cx).hypot((b[1] + b[3]) / 2.0 - cy))
        })
        .collect();
    assert!(distances.len() >= 5, "page {page}: too few words matched ({})", distances.len());
    distances.sort_by(f32::total_cmp);
    distances[distances.len() * 9 / 10]
}

/// The skew (degrees) of a page read back: the median angle of its long lines.
fn skew_degrees(text: &ocr::PageText) -> f32 {
    user_space_skew(text, &|p| p).to_degrees()
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn rotate_pages_shows_each_turned_page_upright_with_its_text_layer_on_its_words() {
    init_ocr();
    let scratch = Scratch::new("turn-rotate");
    let input = corpus_file("scanned-rotated-4-directions.pdf");
    let out = scratch.path("rotated.pdf");
    let json = searchable(&input, &out, PageTurn { rotate_pages: true, deskew: false });
    let found: Vec<i64> =
        json["pages"].as_array().unwrap().iter().map(|p| p["text_rotation"].as_i64().unwrap()).collect();
    assert_eq!(found.iter().filter(|&&r| r != 0).count(), 3, "three of the four pages are turned: {found:?}");
    // The page's own /Rotate (0 here) plus the turn found; the JSON still names the turn.
    assert_eq!(rotations(&out), found.iter().map(|r| r % 360).collect::<Vec<_>>());
    for (page, png) in render(&scratch, &out, "rotated").iter().enumerate() {
        let printed = read_back(png);
        assert_eq!(printed.text.rotation, 0, "page {page} is shown upright");
        let text = printed.text.text().to_lowercase();
        assert!(text.contains("linnsequencer"), "page {page}: {text}");
        let offset = layer_offset(&out, page, &printed);
        assert!(offset < 3.0, "page {page}: the layer's words are {offset} pt from the printed ones");
    }
    // Without the option, the turned pages are shown as they were scanned.
    let kept = scratch.path("kept.pdf");
    searchable(&input, &kept, PageTurn::default());
    assert_eq!(rotations(&kept), vec![0; 4]);
    let sideways = render(&scratch, &kept, "kept").iter().map(|png| read_back(png).text.rotation).collect::<Vec<_>>();
    assert_eq!(sideways, found.iter().map(|&r| r as u32).collect::<Vec<_>>());
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn deskew_draws_a_skewed_page_straight_with_its_text_layer_along_the_straightened_lines() {
    init_ocr();
    let scratch = Scratch::new("turn-deskew");
    // A skewed two-column scan, and a skewed scan shown through /Rotate 90.
    for name in ["scanned-skewed-two-column.pdf", "scanned-rotated-skewed.pdf"] {
        let input = corpus_file(name);
        let label = name.trim_end_matches(".pdf");
        let before = read_back(&render(&scratch, &input, &format!("{label}-in"))[0]);
        let skew = skew_degrees(&before.text);
        assert!(skew.abs() > 0.5, "{name}: the input is skewed ({skew} degrees)");
        let out = scratch.path(&format!("{label}-straight.pdf"));
        searchable(&input, &out, PageTurn { rotate_pages: true, deskew: true });
        assert_eq!(common::qpdf_check(&out, None), 0, "{name}: qpdf --check");
        let printed = read_back(&render(&scratch, &out, &format!("{label}-out"))[0]);
        let left = skew_degrees(&printed.text);
        assert!(left.abs() < 0.15, "{name}: {skew} degrees before, {left} after");
        assert_eq!(printed.text.rotation, 0, "{name} is shown upright");
        // The layer's lines are straight: the words pdftotext puts on one line share a baseline.
        let words = layer_words(&out, 0);
        let mut worst = 0f32;
        for pair in words.windows(2) {
            let ([a, b], height) = ([pair[0].1, pair[1].1], pair[0].1[3] - pair[0].1[1]);
            let same_line = b[0] > a[2] && (b[3] - a[3]).abs() < 0.5 * height;
            if same_line && b[0] - a[2] < 2.0 * height {
                worst = worst.max((b[3] - a[3]).abs());
            }
        }
        assert!(worst < 0.5, "{name}: neighbouring words' baselines differ by up to {worst} pt");
        let offset = layer_offset(&out, 0, &printed);
        assert!(offset < 3.0, "{name}: the layer's words are {offset} pt from the printed ones");
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn an_upright_straight_page_is_written_byte_for_byte_as_without_the_options() {
    init_ocr();
    let scratch = Scratch::new("turn-none");
    // A born-digital page rendered to an image: upright and exactly straight.
    let png = render(&scratch, &corpus_file("latex-outline-4-pages.pdf"), "latex")[0].clone();
    let plain = scratch.path("plain.pdf");
    let turned = scratch.path("turned.pdf");
    searchable(&png, &plain, PageTurn::default());
    searchable(&png, &turned, PageTurn { rotate_pages: true, deskew: true });
    // A trailer /ID, where the save writes one, differs from save to save; nothing else may.
    let without_id = |p: &Path| {
        let text: String = std::fs::read(p).unwrap().into_iter().map(char::from).collect();
        match text.rfind("/ID") {
            Some(at) => text[..at].to_string() + &text[at + text[at..].find(']').unwrap()..],
            None => text,
        }
    };
    assert_eq!(without_id(&plain), without_id(&turned));
}

//! The `blocks` JSON of OCR: pages, blocks, lines and words, boxes in displayed points from
//! the top-left of the page, built from the `ocr` crate's result.

use serde::Serialize;

/// A word in the JSON result.
#[derive(Debug, Clone, Serialize)]
pub struct WordJson {
    /// Text.
    pub text: String,
    /// `[x0, y0, x1, y1]`, points from the top-left of the displayed page.
    pub bbox: [f32; 4],
    /// 0-1.
    pub confidence: f32,
}

/// A line in the JSON result.
#[derive(Debug, Clone, Serialize)]
pub struct LineJson {
    /// Text (words joined by spaces).
    pub text: String,
    /// Box.
    pub bbox: [f32; 4],
    /// Mean character confidence.
    pub confidence: f32,
    /// Words.
    pub words: Vec<WordJson>,
}

/// A block in the JSON result.
#[derive(Debug, Clone, Serialize)]
pub struct BlockJson {
    /// Box.
    pub bbox: [f32; 4],
    /// Lines in reading order.
    pub lines: Vec<LineJson>,
}

/// One page of the JSON result.
#[derive(Debug, Clone, Serialize)]
pub struct PageJson {
    /// 0-based page index in the input.
    pub page: usize,
    /// Displayed page width in points.
    pub width: f32,
    /// Displayed page height in points.
    pub height: f32,
    /// Whether the page was OCRed.
    pub ocr: bool,
    /// Why not (`"has_text"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<&'static str>,
    /// Render resolution used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dpi: Option<f32>,
    /// Clockwise rotation that makes the text upright (0, 90, 180, 270).
    pub text_rotation: u32,
    /// Plain text in reading order (lines separated by `\n`, blocks by `\n\n`).
    pub text: String,
    /// Blocks in reading order.
    pub blocks: Vec<BlockJson>,
    /// What read this page when it is not the document's `engine` (a page whose detected
    /// script chose another reader).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Script and orientation detection's verdict (pages Tesseract read with it installed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<ScriptJson>,
    /// Why the page was not read (`ocr_timeout`); its text is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<PageError>,
}

/// A page that failed while the job went on.
#[derive(Debug, Clone, Serialize)]
pub struct PageError {
    /// Engine error code (`ocr_timeout`).
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

/// What orientation and script detection (Tesseract OSD) said about a page.
#[derive(Debug, Clone, Serialize)]
pub struct ScriptJson {
    /// Script name as Tesseract gives it (`Cyrillic`, `Arabic`, `Latin`, `Han`, ...).
    pub name: String,
    /// Tesseract's script confidence (not a probability: above about 1 it is sure).
    pub confidence: f32,
    /// Whether the confidence reaches [`ocr::tesseract::SCRIPT_SURE_FROM`]; an unsure verdict's
    /// reader keeps the page only where it read it more confidently than the default one.
    pub sure: bool,
    /// Clockwise turn of the page's text that detection found (0, 90, 180, 270).
    pub orientation: u32,
    /// Tesseract's orientation confidence (turned for reading from
    /// [`ocr::tesseract::TURN_FROM_CONFIDENCE`]).
    pub orientation_confidence: f32,
}

impl From<ocr::tesseract::Osd> for ScriptJson {
    fn from(o: ocr::tesseract::Osd) -> Self {
        let r = |v: f32| (v * 100.0).round() / 100.0;
        Self {
            sure: o.script_confidence >= ocr::tesseract::SCRIPT_SURE_FROM,
            name: o.script,
            confidence: r(o.script_confidence),
            orientation: o.orientation,
            orientation_confidence: r(o.orientation_confidence),
        }
    }
}

impl PageJson {
    /// A page the OCR read: `result` with its boxes already in displayed points.
    pub(super) fn recognised(
        page: usize,
        width: f32,
        height: f32,
        dpi: f32,
        result: &ocr::PageText,
        blocks: Vec<BlockJson>,
    ) -> Self {
        PageJson {
            page,
            width,
            height,
            ocr: true,
            skipped: None,
            dpi: Some(dpi.round()),
            text_rotation: result.rotation,
            text: result.text(),
            blocks,
            engine: None,
            script: None,
            error: None,
        }
    }

    /// A page whose reading failed (`code`, e.g. `ocr_timeout`) while the job went on.
    pub(super) fn failed(page: usize, width: f32, height: f32, code: &'static str, message: String) -> Self {
        PageJson {
            page,
            width,
            height,
            ocr: false,
            skipped: None,
            dpi: None,
            text_rotation: 0,
            text: String::new(),
            blocks: Vec::new(),
            engine: None,
            script: None,
            error: Some(PageError { code, message }),
        }
    }

    /// A page left alone because it already carries text: `text` is that text layer.
    pub(super) fn has_text(page: usize, width: f32, height: f32, text: String) -> Self {
        PageJson {
            page,
            width,
            height,
            ocr: false,
            skipped: Some("has_text"),
            dpi: None,
            text_rotation: 0,
            text,
            blocks: Vec::new(),
            engine: None,
            script: None,
            error: None,
        }
    }
}

/// The JSON result.
#[derive(Debug, Clone, Serialize)]
pub struct OcrJson {
    /// What read the pages (`pp-ocrv6-tiny`, `pp-ocrv6-small`, `tesseract-5.3.0`).
    pub engine: String,
    /// Unit of every box and page size.
    pub unit: &'static str,
    /// Origin of the boxes.
    pub origin: &'static str,
    /// Selected pages.
    pub pages: Vec<PageJson>,
}

/// The engine's blocks in displayed points (top-left origin), rounded to 0.01 pt.
pub(super) fn blocks_json(result: &ocr::PageText, sx: f32, sy: f32, pw: f32, ph: f32) -> Vec<BlockJson> {
    let to_pts = |b: [f32; 4]| -> [f32; 4] {
        let r = |v: f32| (v * 100.0).round() / 100.0;
        [
            r((b[0] * sx).clamp(0.0, pw)),
            r((b[1] * sy).clamp(0.0, ph)),
            r((b[2] * sx).clamp(0.0, pw)),
            r((b[3] * sy).clamp(0.0, ph)),
        ]
    };
    let conf = |c: f32| (c * 1000.0).round() / 1000.0;
    result
        .blocks
        .iter()
        .map(|b| BlockJson {
            bbox: to_pts(b.bbox),
            lines: b
                .lines
                .iter()
                .map(|l| LineJson {
                    text: l.text.clone(),
                    bbox: to_pts(l.bbox),
                    confidence: conf(l.confidence),
                    words: l
                        .words
                        .iter()
                        .map(|w| WordJson {
                            text: w.text.clone(),
                            bbox: to_pts(w.bbox),
                            confidence: conf(w.confidence),
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

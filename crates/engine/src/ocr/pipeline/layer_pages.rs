//! Page-parallel searchable PDFs: the recognition of each page, kept between the step that
//! reads pages and the one that writes the text layer, and that layer's writing per page.

use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::Matrix;
use serde::{Deserialize, Serialize};

use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::ocr::searchable::TextLayer;
use crate::ocr::turn::{self, PageTurn};

/// One recognised page as [`ocr_layer_pages`](super::ocr_layer_pages) read it: what
/// [`apply_text_layer`](super::apply_text_layer) needs to
/// write its text layer without rendering or recognising it again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LayerPage {
    /// 0-based page index.
    pub page: usize,
    /// Raster pixel -> displayed point scales (x, y) of the page's recognition.
    pub scale: [f32; 2],
    /// The recognition (words corrected), in raster pixels.
    pub text: ocr::PageText,
}

/// Writes [`LayerPage`]s to a JSON file (an array) for [`read_layer_pages`].
pub fn write_layer_pages(path: &Path, pages: &[LayerPage]) -> Result<()> {
    let failed =
        |e: &dyn std::fmt::Display| EngineError::new(ErrorCode::EngineError, format!("writing the text layer: {e}"));
    let file = std::fs::File::create(path).map_err(|e| failed(&e))?;
    let mut w = BufWriter::new(file);
    serde_json::to_writer(&mut w, pages).map_err(|e| failed(&e))?;
    w.flush().map_err(|e| failed(&e))
}

/// Reads the [`LayerPage`]s [`write_layer_pages`] wrote.
pub fn read_layer_pages(path: &Path) -> Result<Vec<LayerPage>> {
    let failed =
        |e: &dyn std::fmt::Display| EngineError::new(ErrorCode::EngineError, format!("reading the text layer: {e}"));
    let file = std::fs::File::open(path).map_err(|e| failed(&e))?;
    serde_json::from_reader(BufReader::new(file)).map_err(|e| failed(&e))
}

/// Appends a recognised page's words to its text layer, and turns the page as `turn` asks.
/// `scale` maps raster pixels to displayed points from the top-left of `bounds`.
pub(super) fn add_layer_page(
    layer: &mut TextLayer,
    doc: &mut PdfDocument,
    page_obj: &mut PdfObject,
    bounds: mupdf::Rect,
    scale: [f32; 2],
    text: &ocr::PageText,
    turn: PageTurn,
) -> Result<()> {
    let [sx, sy] = scale;
    // Displayed points -> PDF user space of this page.
    let page_ctm = page_obj.page_ctm().ctx("reading the page matrix")?;
    let inv = page_ctm.invert().unwrap_or(Matrix::IDENTITY);
    let to_user = |p: [f32; 2]| -> [f32; 2] {
        let (x, y) = inv.transform_xy(p[0] * sx + bounds.x0, p[1] * sy + bounds.y0);
        [x, y]
    };
    let centre = to_user([(bounds.x1 - bounds.x0) / 2.0 / sx, (bounds.y1 - bounds.y0) / 2.0 / sy]);
    turn::add_turned_page(layer, doc, page_obj, text, &to_user, centre, turn)
}

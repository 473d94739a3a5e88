//! What a page becomes in the document: items (text, tables, pictures) and the styled runs
//! of their lines, as `extract` reads them and `package` writes them.

/// The style of a run of characters, as Word gets it.
#[derive(Clone, PartialEq)]
pub(super) struct Style {
    pub(super) font: String,
    pub(super) half_points: u32,
    pub(super) bold: bool,
    pub(super) italic: bool,
    pub(super) underline: bool,
    pub(super) strike: bool,
    pub(super) color: u32,
}

/// Characters of one style.
pub(super) struct Run {
    pub(super) style: Style,
    pub(super) text: String,
}

/// A line of text: its box (points, page coordinates), largest font size and runs.
pub(super) struct Line {
    pub(super) x0: f32,
    pub(super) x1: f32,
    pub(super) y0: f32,
    pub(super) y1: f32,
    pub(super) size: f32,
    pub(super) runs: Vec<Run>,
    /// Glyphs of the line whose codes have no usable Unicode mapping, left out of `runs`.
    pub(super) unmapped_glyphs: u32,
}

/// What a block of the page becomes in the document.
pub(super) enum Item {
    Text(Vec<Line>),
    /// A detected table: column widths (points) and rows of cells (lines of each cell).
    Table(Vec<f32>, Vec<Vec<Vec<Line>>>),
    /// PNG bytes, or `None` when the image was left out.
    Image(Option<Vec<u8>>),
}

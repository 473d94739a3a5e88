//! Table detection for pdf -> docx, from MuPDF's structured text (no ruling lines: the
//! `mupdf` crate's structured text exposes no vector paths).
//!
//! A *row* is a horizontal band of text where every block is on one line band (MuPDF puts
//! the cells of a table row in one block, one line per cell, or in one block per cell).
//! A *table* is a run of at least [`MIN_ROWS`] consecutive rows, each with at least two
//! cells separated by white space, close to each other vertically, whose cells fall into at
//! least [`MIN_COLUMNS`] columns (the connected parts of the x-projection of all the cells).
//! Conservative by design, so that multi-column prose stays paragraphs:
//! - blocks of several lines stacked vertically (paragraphs, wrapped cells) never belong
//!   to a row, so a table with wrapped cells is not detected;
//! - no cell wider than [`MAX_CELL_SHARE`] of the page, at most [`MAX_WORDS_PER_CELL`]
//!   words per cell on average, every column used by at least two rows.

/// Rows needed for a table.
pub const MIN_ROWS: usize = 3;
/// Columns needed for a table.
pub const MIN_COLUMNS: usize = 2;
/// Widest cell, as a share of the page width.
pub const MAX_CELL_SHARE: f32 = 0.45;
/// Mean words per non-empty cell above which the "table" is prose.
pub const MAX_WORDS_PER_CELL: f32 = 6.0;
/// Minimum white space between two cells of a row, in points.
pub const MIN_CELL_GAP: f32 = 6.0;

/// A line as the detector sees it: its block, box and text.
#[derive(Debug, Clone)]
pub struct CellLine {
    /// Index of its block.
    pub block: usize,
    /// Index of the line in its block.
    pub line: usize,
    /// Left.
    pub x0: f32,
    /// Top.
    pub y0: f32,
    /// Right.
    pub x1: f32,
    /// Bottom.
    pub y1: f32,
    /// Text.
    pub text: String,
}

/// A detected table: `cells[row][column]` lists the (block, line) of its lines, left to right.
#[derive(Debug, Clone)]
pub struct Table {
    /// Blocks that make up the table (none of them belongs to anything else).
    pub blocks: Vec<usize>,
    /// Column extents `(x0, x1)`, left to right.
    pub columns: Vec<(f32, f32)>,
    /// Rows, top to bottom; each has `columns.len()` cells.
    pub cells: Vec<Vec<Vec<(usize, usize)>>>,
}

fn overlap(a: (f32, f32), b: (f32, f32)) -> f32 {
    a.1.min(b.1) - a.0.max(b.0)
}

/// Finds tables among `blocks` (each a list of lines) on a page `page_width` wide.
pub fn detect(blocks: &[Vec<CellLine>], page_width: f32) -> Vec<Table> {
    // Single-band blocks: every line overlaps the block's first line vertically by half.
    let mut single: Vec<usize> = Vec::new();
    for (b, lines) in blocks.iter().enumerate() {
        let Some(first) = lines.first() else { continue };
        let h = (first.y1 - first.y0).max(1.0);
        if lines.iter().all(|l| overlap((l.y0, l.y1), (first.y0, first.y1)) > 0.5 * h.min(l.y1 - l.y0)) {
            single.push(b);
        }
    }
    // Rows: single-band blocks grouped by vertical overlap.
    single.sort_by(|&a, &b| blocks[a][0].y0.total_cmp(&blocks[b][0].y0));
    let band = |b: usize| {
        let ls = &blocks[b];
        (ls.iter().map(|l| l.y0).fold(f32::MAX, f32::min), ls.iter().map(|l| l.y1).fold(f32::MIN, f32::max))
    };
    let mut rows: Vec<(Vec<usize>, f32, f32)> = Vec::new();
    for b in single {
        let (y0, y1) = band(b);
        match rows.last_mut() {
            Some((bs, ry0, ry1)) if overlap((*ry0, *ry1), (y0, y1)) > 0.5 * (y1 - y0).min(*ry1 - *ry0) => {
                bs.push(b);
                *ry0 = ry0.min(y0);
                *ry1 = ry1.max(y1);
            }
            _ => rows.push((vec![b], y0, y1)),
        }
    }
    // A row's cells: its lines left to right; a row qualifies with >= 2 cells apart.
    let row_cells = |bs: &[usize]| -> Option<Vec<&CellLine>> {
        let mut ls: Vec<&CellLine> = bs.iter().flat_map(|&b| blocks[b].iter()).collect();
        ls.sort_by(|a, b| a.x0.total_cmp(&b.x0));
        if ls.len() < 2 {
            return None;
        }
        for w in ls.windows(2) {
            if w[1].x0 - w[0].x1 < MIN_CELL_GAP {
                return None;
            }
        }
        if ls.iter().any(|l| l.x1 - l.x0 > MAX_CELL_SHARE * page_width) {
            return None;
        }
        Some(ls)
    };
    let mut tables = Vec::new();
    let mut i = 0;
    while i < rows.len() {
        // Grow a run of qualifying rows close to each other.
        let mut run: Vec<usize> = Vec::new();
        let mut j = i;
        while j < rows.len() && row_cells(&rows[j].0).is_some() {
            if let Some(&prev) = run.last() {
                let (_, p0, p1) = rows[prev];
                let (_, y0, _) = rows[j];
                if y0 - p1 > 2.5 * (p1 - p0).max(1.0) {
                    break;
                }
            }
            run.push(j);
            j += 1;
        }
        if run.len() >= MIN_ROWS {
            if let Some(t) = build(blocks, &rows, &run, &row_cells) {
                tables.push(t);
            }
        }
        i = j.max(i + 1);
    }
    tables
}

fn build<'a>(
    _blocks: &'a [Vec<CellLine>],
    rows: &[(Vec<usize>, f32, f32)],
    run: &[usize],
    row_cells: &dyn Fn(&[usize]) -> Option<Vec<&'a CellLine>>,
) -> Option<Table> {
    let cells: Vec<Vec<&CellLine>> = run.iter().map(|&r| row_cells(&rows[r].0).unwrap()).collect();
    // Columns: connected parts of the x-projection of every cell.
    let mut spans: Vec<(f32, f32)> = cells.iter().flatten().map(|l| (l.x0, l.x1)).collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut columns: Vec<(f32, f32)> = Vec::new();
    for (a, b) in spans {
        match columns.last_mut() {
            Some(c) if a < c.1 + MIN_CELL_GAP / 2.0 => c.1 = c.1.max(b),
            _ => columns.push((a, b)),
        }
    }
    if columns.len() < MIN_COLUMNS {
        return None;
    }
    let mut grid: Vec<Vec<Vec<(usize, usize)>>> = Vec::new();
    let mut used = vec![0usize; columns.len()];
    let mut words = 0usize;
    let mut filled = 0usize;
    for row in &cells {
        let mut out = vec![Vec::new(); columns.len()];
        for l in row {
            let c = columns.iter().position(|&(a, b)| l.x0 >= a - 0.01 && l.x1 <= b + 0.01)?;
            out[c].push((l.block, l.line));
            words += l.text.split_whitespace().count();
        }
        for (c, cell) in out.iter().enumerate() {
            if !cell.is_empty() {
                used[c] += 1;
                filled += 1;
            }
        }
        grid.push(out);
    }
    if used.iter().any(|&u| u < 2) || filled == 0 || words as f32 / filled as f32 > MAX_WORDS_PER_CELL {
        return None;
    }
    let mut bs: Vec<usize> = run.iter().flat_map(|&r| rows[r].0.iter().copied()).collect();
    bs.sort_unstable();
    Some(Table { blocks: bs, columns, cells: grid })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(block: usize, x0: f32, y0: f32, x1: f32, text: &str) -> CellLine {
        CellLine { block, line: 0, x0, y0, x1, y1: y0 + 12.0, text: text.to_owned() }
    }

    #[test]
    fn docx_tables_aligned_rows_make_a_table_and_prose_columns_do_not() {
        // Three rows of one block each (a line per cell), three columns.
        let mut blocks = Vec::new();
        for (r, y) in [100.0, 124.0, 148.0].into_iter().enumerate() {
            let mut b = vec![l(r, 72.0, y, 120.0, "Name"), l(r, 200.0, y, 240.0, "12"), l(r, 320.0, y, 380.0, "x y")];
            for (i, x) in b.iter_mut().enumerate() {
                x.line = i;
            }
            blocks.push(b);
        }
        let t = detect(&blocks, 612.0);
        assert_eq!(t.len(), 1);
        assert_eq!(t[0].columns.len(), 3);
        assert_eq!(t[0].cells.len(), 3);
        // Two columns of prose: each block is a paragraph of many lines -> no table.
        let para = |b: usize, x0: f32| {
            (0..10)
                .map(|i| CellLine {
                    line: i,
                    ..l(b, x0, 100.0 + 12.0 * i as f32, x0 + 240.0, "lorem ipsum dolor sit amet consectetur")
                })
                .collect::<Vec<_>>()
        };
        assert!(detect(&[para(0, 50.0), para(1, 320.0)], 612.0).is_empty());
        // Single-line prose lines side by side: too many words per cell, too wide.
        let blocks: Vec<Vec<CellLine>> = (0..8)
            .map(|i| {
                vec![l(
                    i,
                    if i % 2 == 0 { 50.0 } else { 320.0 },
                    100.0 + 12.0 * (i / 2) as f32,
                    if i % 2 == 0 { 290.0 } else { 560.0 },
                    "the quick brown fox jumps over the lazy dog",
                )]
            })
            .collect();
        assert!(detect(&blocks, 612.0).is_empty());
    }
}

//! Reading order of the blocks of a page (recursive XY-cut, right margin columns last),
//! from their boxes alone: the pdf -> docx converter writes blocks in this order.

/// Minimum white space (points) that separates columns / bands in [`reading_order`].
const MIN_COLUMN_GAP: f32 = 9.0;
const MIN_BAND_GAP: f32 = 3.0;
/// Gaps at least this share of the widest are cut together in one step of [`reading_order`].
const WIDEST_GAP_SHARE: f32 = 0.8;

/// Reading order of the blocks of a page by recursive XY-cut: split the set at the widest
/// white band across it (horizontal bands top to bottom, or columns left to right, whichever
/// gap is wider relative to its threshold); a set that cannot be cut keeps MuPDF's order.
pub(super) fn reading_order(rects: &[mupdf::Rect]) -> Vec<usize> {
    fn groups(idx: &[usize], rects: &[mupdf::Rect], vertical: bool) -> (Vec<Vec<usize>>, f32) {
        let key = |i: usize| if vertical { (rects[i].x0, rects[i].x1) } else { (rects[i].y0, rects[i].y1) };
        let mut sorted = idx.to_vec();
        sorted.sort_by(|&a, &b| key(a).0.total_cmp(&key(b).0));
        // Runs of overlapping blocks, each with the white gap before it.
        let mut runs: Vec<(f32, Vec<usize>)> = Vec::new();
        let mut end = f32::NEG_INFINITY;
        for i in sorted {
            let (a, b) = key(i);
            if runs.is_empty() || a > end {
                runs.push((a - end, vec![i]));
                end = b;
            } else {
                runs.last_mut().unwrap().1.push(i);
                end = end.max(b);
            }
        }
        let min = if vertical { MIN_COLUMN_GAP } else { MIN_BAND_GAP };
        let widest = runs.iter().skip(1).map(|r| r.0).fold(0f32, f32::max);
        // Cut only at the gaps nearly as wide as the widest: narrower ones are cut later,
        // inside the parts, where the other direction may come first (the bands of a
        // two-column page under a title are columns first, then paragraphs).
        let cut_at = min.max(WIDEST_GAP_SHARE * widest);
        let mut out: Vec<Vec<usize>> = Vec::new();
        for (k, (gap, members)) in runs.into_iter().enumerate() {
            if k == 0 || gap >= cut_at {
                out.push(members);
            } else {
                out.last_mut().unwrap().extend(members);
            }
        }
        (out, if widest >= min { widest } else { 0.0 })
    }
    fn cut(idx: Vec<usize>, rects: &[mupdf::Rect], order: &mut Vec<usize>, depth: u32) {
        if idx.len() <= 1 || depth > 64 {
            let mut idx = idx;
            idx.sort_unstable();
            order.extend(idx);
            return;
        }
        let (bands, band_gap) = groups(&idx, rects, false);
        let (cols, col_gap) = groups(&idx, rects, true);
        let parts = if bands.len() > 1 && (cols.len() <= 1 || band_gap / MIN_BAND_GAP >= col_gap / MIN_COLUMN_GAP) {
            bands
        } else if cols.len() > 1 {
            cols
        } else {
            let loose = loose_bands(&idx, rects);
            if loose.len() > 1 {
                loose
            } else {
                let mut idx = idx;
                idx.sort_unstable(); // MuPDF's (content) order
                order.extend(idx);
                return;
            }
        };
        for mut part in parts {
            part.sort_unstable();
            cut(part, rects, order, depth + 1);
        }
    }
    /// Bands of a one-column stack of blocks with no white band across it, where consecutive
    /// blocks overlap by at most a third of the smaller height: lines whose boxes (ascent to
    /// descent) touch, such as footnotes set one block per line, which are read top to
    /// bottom whatever their order in the content stream. Only for a stack (every block
    /// overlaps every other horizontally): side-by-side blocks keep the content order, which
    /// reads a row of a two-column list better than cutting across it.
    fn loose_bands(idx: &[usize], rects: &[mupdf::Rect]) -> Vec<Vec<usize>> {
        let max_x0 = idx.iter().map(|&i| rects[i].x0).fold(f32::NEG_INFINITY, f32::max);
        let min_x1 = idx.iter().map(|&i| rects[i].x1).fold(f32::INFINITY, f32::min);
        if max_x0 >= min_x1 {
            return vec![idx.to_vec()];
        }
        let mut sorted = idx.to_vec();
        sorted.sort_by(|&a, &b| rects[a].y0.total_cmp(&rects[b].y0));
        let mut out: Vec<Vec<usize>> = Vec::new();
        let (mut end, mut last_h) = (f32::NEG_INFINITY, 0f32);
        for i in sorted {
            let (y0, y1) = (rects[i].y0, rects[i].y1);
            let h = y1 - y0;
            if out.is_empty() || end - y0 <= h.min(last_h) / 3.0 {
                out.push(vec![i]);
                end = y1;
                last_h = h;
            } else {
                out.last_mut().unwrap().push(i);
                if y1 > end {
                    end = y1;
                    last_h = h;
                }
            }
        }
        out
    }
    let margins = right_margin_columns(rects);
    let body: Vec<usize> = (0..rects.len()).filter(|i| !margins.contains(i)).collect();
    let mut order = Vec::with_capacity(rects.len());
    cut(body, rects, &mut order, 0);
    order.extend(margins);
    order
}

/// A right margin column is at most this share of the width of the page's content.
const MARGIN_COLUMN_MAX_WIDTH: f32 = 0.1;
/// A right margin column is at least this share of the height of the page's content.
const MARGIN_COLUMN_MIN_HEIGHT: f32 = 0.4;

/// Right margin columns of a page: narrow, tall blocks at the right edge of the content with
/// nothing above or below them (every other block lies wholly to their left) — printer's
/// line numbers, a side stamp. [`reading_order`] reads them after the rest of the page, as
/// pdftotext does, not between the text column and the material under it (a footer, a
/// printer's slug). A left margin column needs no rule: the XY-cut reads it before the
/// column beside it, after the bands above, again as pdftotext does.
fn right_margin_columns(rects: &[mupdf::Rect]) -> Vec<usize> {
    if rects.len() < 2 {
        return Vec::new();
    }
    // The content's bounding box.
    let cx0 = rects.iter().map(|r| r.x0).fold(f32::INFINITY, f32::min);
    let cx1 = rects.iter().map(|r| r.x1).fold(f32::NEG_INFINITY, f32::max);
    let cy0 = rects.iter().map(|r| r.y0).fold(f32::INFINITY, f32::min);
    let cy1 = rects.iter().map(|r| r.y1).fold(f32::NEG_INFINITY, f32::max);
    let (cw, ch) = (cx1 - cx0, cy1 - cy0);
    let mut out: Vec<usize> = (0..rects.len())
        .filter(|&i| {
            let m = rects[i];
            m.x1 - m.x0 <= MARGIN_COLUMN_MAX_WIDTH * cw
                && m.y1 - m.y0 >= MARGIN_COLUMN_MIN_HEIGHT * ch
                && rects.iter().enumerate().all(|(j, r)| j == i || r.x1 <= m.x0)
        })
        .collect();
    out.sort_by(|&a, &b| rects[a].x0.total_cmp(&rects[b].x0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(x0: f32, y0: f32, x1: f32, y1: f32) -> mupdf::Rect {
        mupdf::Rect { x0, y0, x1, y1 }
    }

    #[test]
    fn reading_order_reads_columns_before_moving_right_and_margins_last() {
        // Content order: right column first, then a title, then the left column.
        let rects = [
            r(320.0, 100.0, 560.0, 700.0), // right column
            r(50.0, 40.0, 560.0, 70.0),    // title across the page
            r(50.0, 100.0, 290.0, 400.0),  // left column, top
            r(50.0, 420.0, 290.0, 700.0),  // left column, bottom
        ];
        assert_eq!(reading_order(&rects), vec![1, 2, 3, 0]);
        // Line numbers in a right margin come after the text column.
        let rects = [r(580.0, 60.0, 590.0, 760.0), r(60.0, 60.0, 500.0, 760.0)];
        assert_eq!(reading_order(&rects), vec![1, 0]);
        // A two-column index under a title: the columns' paragraph gaps line up (a narrow
        // white band across the page), but only the title's wide gap is cut before the
        // columns, so each column is read whole.
        let rects = [
            r(332.0, 413.0, 466.0, 480.0), // right column, bottom
            r(90.0, 120.0, 294.0, 146.0),  // title
            r(90.0, 177.0, 243.0, 400.0),  // left column, top
            r(332.0, 177.0, 508.0, 405.0), // right column, top
            r(90.0, 417.0, 240.0, 480.0),  // left column, bottom
        ];
        assert_eq!(reading_order(&rects), vec![1, 2, 4, 3, 0]);
        // Blocks that cannot be cut keep MuPDF's order.
        let rects = [r(0.0, 0.0, 100.0, 20.0), r(50.0, 10.0, 150.0, 30.0)];
        assert_eq!(reading_order(&rects), vec![0, 1]);
        // Lines stacked in one column whose boxes touch (one block per line, content order
        // bottom-up) are read top to bottom.
        let rects = [r(72.0, 755.0, 140.0, 770.0), r(72.0, 743.4, 140.0, 758.4), r(72.0, 732.0, 140.0, 747.0)];
        assert_eq!(reading_order(&rects), vec![2, 1, 0]);
    }

    #[test]
    fn reading_order_reads_a_right_margin_column_after_the_page() {
        // A book page (the 352-page book's layout): header, text column, footer, a printer's
        // slug under everything and line numbers in the right margin beside the text. The
        // slug spans below the text and the numbers, so a plain XY-cut reads the numbers
        // before the slug; the margin column rule reads them last.
        let rects = [
            r(3.0, -38.0, 218.0, -31.0),   // 0 header
            r(54.0, 51.0, 348.0, 526.0),   // 1 text column
            r(284.0, 541.0, 347.0, 548.0), // 2 footer
            r(407.0, 51.0, 425.0, 526.0),  // 3 line numbers, right margin
            r(219.0, 611.0, 367.0, 630.0), // 4 slug
        ];
        assert_eq!(reading_order(&rects), vec![0, 1, 2, 4, 3]);
        // Mirrored (line numbers in the left margin): read before the text column, after
        // the header, as the XY-cut does.
        let rects = [
            r(200.0, -38.0, 418.0, -31.0), // 0 header
            r(80.0, 51.0, 374.0, 526.0),   // 1 text column
            r(81.0, 541.0, 144.0, 548.0),  // 2 footer
            r(3.0, 51.0, 21.0, 526.0),     // 3 line numbers, left margin
            r(60.0, 611.0, 208.0, 630.0),  // 4 slug
        ];
        assert_eq!(reading_order(&rects), vec![0, 3, 1, 2, 4]);
        // A narrow block at the right that is short (a marginal note beside one paragraph)
        // is no margin column: it stays in the XY-cut.
        let rects = [
            r(54.0, 51.0, 348.0, 526.0),   // 0 text column
            r(380.0, 100.0, 410.0, 130.0), // 1 note
            r(54.0, 560.0, 348.0, 570.0),  // 2 footer line under the text
        ];
        assert_eq!(reading_order(&rects), vec![0, 1, 2]);
    }
}

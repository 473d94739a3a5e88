//! Reading order: recursive XY-cut over the line boxes of an upright page, with the rules real
//! layouts need (each named after the unit test that checks it).
//!
//! A region is cut, in this order of preference:
//! 1. into **columns** at vertical gutters at least [`COLUMN_GAP`] x the median line height wide.
//!    A group narrower than [`COLUMN_MIN_WIDTH`] line heights, of one line, or with fewer than
//!    half its rows holding a line of [`COLUMN_FILL`] x its width (table cells) is not a column:
//!    it joins its nearest neighbour (`narrow_groups_join_their_neighbour_column`), so receipts'
//!    price columns stay in row order while the real columns beside them are still cut;
//! 2. into **bands** at vertical gaps of at least [`BAND_GAP`] line heights; then consecutive
//!    bands that no line crosses at the same gutter are read together as columns, so a column
//!    continues across paragraph gaps and pictures (`columns_continue_across_paragraph_gaps`),
//!    while a band that crosses the gutter (a heading spanning the columns, a picture's caption
//!    across them) separates what is above from what is below (`heading_spanning_columns_...`).
//!    A thin first or last band (running head, page number) is read first or last
//!    (`running_heads_and_page_numbers_...`);
//! 3. into **columns bridged** by a few lines crossing the gutter without a gap around them (a
//!    pull quote set across two columns, a heading set tight): the columns on either side, each
//!    at least [`BRIDGED_MIN_WIDTH`] line heights wide with three lines, are read one after the
//!    other, the bridging lines cut the page into slabs where they span it and are read after
//!    their slab otherwise (`pull_quote_across_the_gutter_...`).
//!
//! A region that splits no way is one block, whose lines are grouped into rows (vertical overlap
//! above half the smaller height) read top to bottom, left to right.

/// Minimum gutter between columns, in median line heights.
pub const COLUMN_GAP: f32 = 0.3;
/// Minimum width of a column, in median line heights.
pub const COLUMN_MIN_WIDTH: f32 = 6.0;
/// In a column, at least half the rows hold a line this share of its width or wider.
pub const COLUMN_FILL: f32 = 0.5;
/// Minimum vertical gap between bands (paragraphs, headings), in median line heights.
pub const BAND_GAP: f32 = 0.6;
/// Minimum width of each side of a gutter crossed by lines, in median line heights: wide enough
/// that a receipt's or a form's value column never qualifies.
pub const BRIDGED_MIN_WIDTH: f32 = 12.0;
/// At most this share of a region's lines may cross a bridged gutter.
pub const BRIDGED_MAX_SHARE: f32 = 0.15;
/// A first or last band of at most this many rows is a running head or a page number.
pub const MARGIN_ROWS: usize = 2;

/// Orders axis-aligned boxes `[x0, y0, x1, y1]` into blocks of box indexes, both in reading order.
pub fn reading_order(boxes: &[[f32; 4]]) -> Vec<Vec<usize>> {
    if boxes.is_empty() {
        return Vec::new();
    }
    let mut hs: Vec<f32> = boxes.iter().map(|b| b[3] - b[1]).collect();
    hs.sort_by(f32::total_cmp);
    let med = hs[hs.len() / 2].max(1.0);
    // Detection boxes are grown ("unclipped") by about 0.3 x their height on every side,
    // which eats the gutters: take that back horizontally before looking for gaps.
    let core: Vec<[f32; 4]> = boxes
        .iter()
        .map(|b| {
            let m = (0.3 * (b[3] - b[1])).min(0.25 * (b[2] - b[0]));
            [b[0] + m, b[1], b[2] - m, b[3]]
        })
        .collect();
    let page = Page { boxes: &core, med };
    let mut out = Vec::new();
    page.cut((0..core.len()).collect(), &mut out, 0);
    out
}

struct Page<'a> {
    boxes: &'a [[f32; 4]],
    med: f32,
}

/// Splits `ids` into groups along `axis` (0: x, 1: y) wherever the projection has a gap wider than `gap`.
fn groups(ids: &[usize], boxes: &[[f32; 4]], axis: usize, gap: f32) -> Vec<Vec<usize>> {
    let (lo, hi) = (axis, axis + 2);
    let mut sorted = ids.to_vec();
    sorted.sort_by(|&a, &b| boxes[a][lo].total_cmp(&boxes[b][lo]));
    let mut out: Vec<Vec<usize>> = Vec::new();
    let mut reach = f32::MIN;
    for id in sorted {
        let b = boxes[id];
        if out.is_empty() || b[lo] > reach + gap {
            out.push(vec![id]);
        } else {
            out.last_mut().unwrap().push(id);
        }
        reach = reach.max(b[hi]);
    }
    out
}

fn span(ids: &[usize], boxes: &[[f32; 4]], axis: usize) -> (f32, f32) {
    let lo = ids.iter().map(|&i| boxes[i][axis]).fold(f32::MAX, f32::min);
    let hi = ids.iter().map(|&i| boxes[i][axis + 2]).fold(f32::MIN, f32::max);
    (lo, hi)
}

impl Page<'_> {
    /// A text column: wide enough, enough lines, and filled: in at least half of its rows a
    /// line spans half its width or more (a table's cells, even gathered, leave it empty).
    fn is_column(&self, g: &[usize], min_width: f32, min_lines: usize) -> bool {
        let (lo, hi) = span(g, self.boxes, 0);
        if g.len() < min_lines || hi - lo < min_width * self.med {
            return false;
        }
        let rows = row_groups(g.to_vec(), self.boxes);
        let filled = rows
            .iter()
            .filter(|r| r.iter().any(|&i| self.boxes[i][2] - self.boxes[i][0] >= COLUMN_FILL * (hi - lo)))
            .count();
        2 * filled >= rows.len()
    }

    /// Columns at clear gutters; groups that are not columns join the neighbour nearest to them.
    /// One group when there are no two columns.
    fn columns(&self, ids: &[usize]) -> Vec<Vec<usize>> {
        let mut cols = groups(ids, self.boxes, 0, COLUMN_GAP * self.med);
        while cols.len() > 1 {
            let Some(i) = cols.iter().position(|g| !self.is_column(g, COLUMN_MIN_WIDTH, 2)) else { break };
            let gap_to = |j: usize| {
                let (a, b) = if j < i { (j, i) } else { (i, j) };
                span(&cols[b], self.boxes, 0).0 - span(&cols[a], self.boxes, 0).1
            };
            let j = match (i.checked_sub(1), (i + 1 < cols.len()).then_some(i + 1)) {
                (Some(l), Some(r)) => {
                    if gap_to(l) <= gap_to(r) {
                        l
                    } else {
                        r
                    }
                }
                (Some(l), None) => l,
                (None, Some(r)) => r,
                (None, None) => unreachable!(),
            };
            let g = cols.remove(i);
            let j = if j > i { j - 1 } else { j };
            cols[j].extend(g);
        }
        cols
    }

    /// The gutters (x intervals) between the columns of `ids`, empty when it has no two columns.
    fn gutters(&self, ids: &[usize]) -> Vec<(f32, f32)> {
        let cols = self.columns(ids);
        cols.windows(2).map(|w| (span(&w[0], self.boxes, 0).1, span(&w[1], self.boxes, 0).0)).collect()
    }

    fn crosses(&self, id: usize, g: (f32, f32)) -> bool {
        let b = self.boxes[id];
        let mid = (g.0 + g.1) / 2.0;
        b[0] < mid && b[2] > mid
    }

    fn cut(&self, ids: Vec<usize>, out: &mut Vec<Vec<usize>>, depth: usize) {
        if ids.len() <= 1 || depth > 64 {
            if !ids.is_empty() {
                out.push(rows(ids, self.boxes));
            }
            return;
        }
        let mut bands = groups(&ids, self.boxes, 1, BAND_GAP * self.med);
        // A thin band at the top or bottom is a running head or page number, read first or
        // last whatever columns it sits over; unless it holds headings of the columns of the
        // band next to it (lines on both sides of its gutter, none across).
        let margin = |b: &Vec<usize>, next: &Vec<usize>| {
            let heads_columns = self.gutters(next).iter().any(|&g| {
                let mid = (g.0 + g.1) / 2.0;
                b.iter().all(|&i| !self.crosses(i, g))
                    && b.iter().any(|&i| self.boxes[i][2] <= mid)
                    && b.iter().any(|&i| self.boxes[i][0] >= mid)
            });
            count_rows(b, self.boxes) <= MARGIN_ROWS && !heads_columns
        };
        let head = if bands.len() > 1 && margin(&bands[0], &bands[1]) { Some(bands.remove(0)) } else { None };
        let n = bands.len();
        let foot = if n > 1 && margin(&bands[n - 1], &bands[n - 2]) { bands.pop() } else { None };
        if head.is_some() || foot.is_some() {
            for part in [head, Some(bands.concat()), foot].into_iter().flatten() {
                self.cut(part, out, depth + 1);
            }
            return;
        }
        // 1. Columns.
        let cols = self.columns(&ids);
        if cols.len() > 1 {
            for g in cols {
                self.cut(g, out, depth + 1);
            }
            return;
        }
        // 2. Bands, with the columns that continue across them read together.
        if bands.len() > 1 {
            for run in self.runs(bands) {
                self.cut(run, out, depth + 1);
            }
            return;
        }
        // 3. Columns bridged by a few lines.
        if self.bridged(&ids, out, depth) {
            return;
        }
        out.push(rows(ids, self.boxes));
    }

    /// Merges consecutive bands into runs that share a gutter no line of theirs crosses.
    fn runs(&self, bands: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
        let mut out: Vec<Vec<usize>> = Vec::new();
        // The gutters of the current run (those of its first band that has columns).
        let mut run_gutters: Vec<(f32, f32)> = Vec::new();
        for band in bands {
            let own = self.gutters(&band);
            let fits = |gs: &[(f32, f32)], ids: &[usize]| {
                !gs.is_empty() && gs.iter().all(|&g| ids.iter().all(|&i| !self.crosses(i, g)))
            };
            let joins = match out.last() {
                None => false,
                Some(_) if !run_gutters.is_empty() => fits(&run_gutters, &band),
                // The run has no columns yet: the band's own gutters must be clear in it.
                Some(prev) => fits(&own, prev),
            };
            if joins {
                if run_gutters.is_empty() {
                    run_gutters = own;
                }
                out.last_mut().unwrap().extend(band);
            } else {
                run_gutters = own;
                out.push(band);
            }
        }
        out
    }

    /// Step 3: returns false (and writes nothing) when no gutter is crossed by few enough lines.
    fn bridged(&self, ids: &[usize], out: &mut Vec<Vec<usize>>, depth: usize) -> bool {
        let (x0, x1) = span(ids, self.boxes, 0);
        let width = x1 - x0;
        let max_cross = ((BRIDGED_MAX_SHARE * ids.len() as f32) as usize).max(1);
        // Candidate gutters: x positions (every half line height) crossed by few lines, where the
        // lines not crossing split into two wide columns of three lines or more.
        let step = (self.med / 2.0).max(1.0);
        let mut best: Option<(usize, Vec<usize>, f32)> = None;
        let mut x = x0 + BRIDGED_MIN_WIDTH * self.med;
        while x <= x1 - BRIDGED_MIN_WIDTH * self.med {
            let crossing: Vec<usize> = ids.iter().copied().filter(|&i| self.crosses(i, (x, x))).collect();
            if crossing.len() <= max_cross && best.as_ref().is_none_or(|b| crossing.len() < b.0) {
                let rest: Vec<usize> = ids.iter().copied().filter(|i| !crossing.contains(i)).collect();
                let left: Vec<usize> = rest.iter().copied().filter(|&i| self.boxes[i][2] <= x).collect();
                let right: Vec<usize> = rest.iter().copied().filter(|&i| self.boxes[i][0] >= x).collect();
                if self.is_column(&left, BRIDGED_MIN_WIDTH, 3) && self.is_column(&right, BRIDGED_MIN_WIDTH, 3) {
                    best = Some((crossing.len(), crossing, x));
                }
            }
            x += step;
        }
        let Some((_, crossing, _)) = best else { return false };
        // The bridging lines, in vertical clusters: a cluster spanning most of the region
        // (a heading) cuts it into slabs; the others (pull quotes) are read after their slab.
        let clusters = groups(&crossing, self.boxes, 1, BAND_GAP * self.med);
        let spanning = |c: &Vec<usize>| {
            let (a, b) = span(c, self.boxes, 0);
            b - a >= 0.8 * width
        };
        let rest: Vec<usize> = ids.iter().copied().filter(|i| !crossing.contains(i)).collect();
        let cy = |i: usize| (self.boxes[i][1] + self.boxes[i][3]) / 2.0;
        let mut slab_top = f32::MIN;
        let mut pending: Vec<Vec<usize>> = Vec::new();
        let flush = |top: f32, bottom: f32, pending: &mut Vec<Vec<usize>>, out: &mut Vec<Vec<usize>>| {
            let slab: Vec<usize> = rest.iter().copied().filter(|&i| cy(i) > top && cy(i) <= bottom).collect();
            if !slab.is_empty() {
                self.cut(slab, out, depth + 1);
            }
            for c in pending.drain(..) {
                self.cut(c, out, depth + 1);
            }
        };
        for c in clusters {
            if spanning(&c) {
                let (top, bottom) = span(&c, self.boxes, 1);
                flush(slab_top, top, &mut pending, out);
                self.cut(c, out, depth + 1);
                slab_top = bottom;
            } else {
                pending.push(c);
            }
        }
        flush(slab_top, f32::MAX, &mut pending, out);
        true
    }
}

fn count_rows(ids: &[usize], boxes: &[[f32; 4]]) -> usize {
    row_groups(ids.to_vec(), boxes).len()
}

/// Lines grouped into rows (vertical overlap above half the smaller height with every line of
/// the row), top to bottom.
fn row_groups(mut ids: Vec<usize>, boxes: &[[f32; 4]]) -> Vec<Vec<usize>> {
    ids.sort_by(|&a, &b| {
        let ca = (boxes[a][1] + boxes[a][3]) / 2.0;
        let cb = (boxes[b][1] + boxes[b][3]) / 2.0;
        ca.total_cmp(&cb)
    });
    let mut rows: Vec<Vec<usize>> = Vec::new();
    for id in ids {
        let b = boxes[id];
        // Overlapping every line of the row, not only its last: a tall box (a picture read as
        // a character) otherwise chains the rows beside it into one, read left to right.
        let joins = rows.last().is_some_and(|row| {
            row.iter().all(|&j| {
                let r = boxes[j];
                let overlap = b[3].min(r[3]) - b[1].max(r[1]);
                overlap > 0.5 * (b[3] - b[1]).min(r[3] - r[1])
            })
        });
        if joins {
            rows.last_mut().unwrap().push(id);
        } else {
            rows.push(vec![id]);
        }
    }
    rows
}

/// Groups lines into rows and returns them top to bottom, left to right.
fn rows(ids: Vec<usize>, boxes: &[[f32; 4]]) -> Vec<usize> {
    row_groups(ids, boxes)
        .into_iter()
        .flat_map(|mut r| {
            r.sort_by(|&a, &b| boxes[a][0].total_cmp(&boxes[b][0]));
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` lines of height 10 every 12 units from `y`, between `x0` and `x1`.
    fn column(x0: f32, x1: f32, y: f32, n: usize) -> Vec<[f32; 4]> {
        (0..n).map(|i| [x0, y + i as f32 * 12.0, x1, y + i as f32 * 12.0 + 10.0]).collect()
    }

    fn order(b: &[[f32; 4]]) -> Vec<usize> {
        reading_order(b).concat()
    }

    #[test]
    fn two_columns_are_read_one_after_the_other() {
        // Title across, then two columns of three lines each at the same heights.
        let mut b = vec![[0.0, 0.0, 200.0, 10.0]];
        b.extend(column(0.0, 90.0, 30.0, 3));
        b.extend(column(110.0, 200.0, 30.0, 3));
        assert_eq!(order(&b), (0..7).collect::<Vec<_>>());
    }

    #[test]
    fn receipt_rows_with_narrow_prices_stay_in_row_order() {
        let mut b = Vec::new();
        for i in 0..4 {
            let y = i as f32 * 12.0;
            b.push([0.0, y, 100.0, y + 10.0]);
            b.push([160.0, y, 190.0, y + 10.0]);
        }
        assert_eq!(order(&b), (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn narrow_groups_join_their_neighbour_column() {
        // Left column with a narrow tag at the end of each row (a price, a line number), then
        // a wide right column: the tags stay in the left column's rows, the right column after.
        let mut b = Vec::new();
        for i in 0..4 {
            let y = i as f32 * 12.0;
            b.push([0.0, y, 100.0, y + 10.0]);
            b.push([106.0, y, 120.0, y + 10.0]);
        }
        b.extend(column(150.0, 260.0, 0.0, 4));
        assert_eq!(order(&b), (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn columns_of_unequal_width_are_read_one_after_the_other() {
        let mut b = column(0.0, 300.0, 0.0, 6);
        b.extend(column(320.0, 390.0, 0.0, 6));
        assert_eq!(order(&b), (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn columns_continue_across_paragraph_gaps() {
        // A title across both columns (so no gutter crosses the page), then two columns whose
        // paragraph gaps fall at the same height: plain XY-cut reads them band by band.
        let mut b = vec![[0.0, 0.0, 200.0, 10.0]];
        b.extend(column(0.0, 90.0, 30.0, 3));
        b.extend(column(0.0, 90.0, 80.0, 3));
        b.extend(column(110.0, 200.0, 30.0, 3));
        b.extend(column(110.0, 200.0, 80.0, 3));
        assert_eq!(order(&b), (0..13).collect::<Vec<_>>());
    }

    #[test]
    fn pictures_and_captions_inside_a_column_do_not_break_it() {
        // Left column: text, a picture (no lines), a short centred caption, text; the right
        // column runs on beside them. Then a figure across both columns with its caption.
        let mut b = column(0.0, 90.0, 0.0, 3);
        b.push([30.0, 110.0, 60.0, 120.0]); // caption under the picture at 40-105
        b.extend(column(0.0, 90.0, 130.0, 3));
        b.extend(column(110.0, 200.0, 0.0, 14));
        assert_eq!(order(&b), (0..21).collect::<Vec<_>>());
    }

    #[test]
    fn heading_spanning_columns_separates_what_is_above_from_below() {
        let mut b = column(0.0, 90.0, 0.0, 3);
        b.extend(column(110.0, 200.0, 0.0, 3));
        b.push([20.0, 50.0, 180.0, 62.0]);
        b.extend(column(0.0, 90.0, 80.0, 3));
        b.extend(column(110.0, 200.0, 80.0, 3));
        assert_eq!(order(&b), (0..13).collect::<Vec<_>>());
    }

    #[test]
    fn running_heads_and_page_numbers_are_read_first_and_last() {
        // A running head over the right column and a page number under the left one, two
        // columns between: head, left column, right column, page number.
        let mut b = vec![[150.0, 0.0, 200.0, 10.0]];
        b.extend(column(0.0, 90.0, 30.0, 5));
        b.extend(column(110.0, 200.0, 30.0, 5));
        b.push([0.0, 110.0, 10.0, 120.0]);
        assert_eq!(order(&b), (0..12).collect::<Vec<_>>());
    }

    #[test]
    fn column_headings_stay_with_their_columns() {
        // One heading over each column, at the same height: each is read with its column.
        let mut b = vec![[0.0, 0.0, 60.0, 10.0]];
        b.extend(column(0.0, 90.0, 20.0, 4));
        b.push([110.0, 0.0, 170.0, 10.0]);
        b.extend(column(110.0, 200.0, 20.0, 4));
        assert_eq!(order(&b), (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn sidebar_beside_the_text_is_read_after_it() {
        // Main text in paragraphs; a boxed sidebar on the right, with a heading and its own gap.
        let mut b = column(0.0, 250.0, 0.0, 5);
        b.extend(column(0.0, 250.0, 70.0, 5));
        b.push([280.0, 10.0, 380.0, 22.0]);
        b.extend(column(280.0, 380.0, 30.0, 4));
        b.extend(column(280.0, 380.0, 90.0, 2));
        assert_eq!(order(&b), (0..17).collect::<Vec<_>>());
    }

    #[test]
    fn pull_quote_across_the_gutter_is_read_after_its_columns() {
        // Two columns of 12 lines; at rows 5-6 a pull quote set across the gutter, the columns'
        // lines beside it shortened. No gap runs across the page or down the gutter.
        let mut left = Vec::new();
        let mut right = Vec::new();
        for i in 0..12 {
            let y = i as f32 * 12.0;
            let quote_row = i == 5 || i == 6;
            left.push([0.0, y, if quote_row { 120.0 } else { 190.0 }, y + 10.0]);
            right.push([if quote_row { 290.0 } else { 210.0 }, y, 400.0, y + 10.0]);
        }
        let quote = [[140.0, 62.0, 270.0, 72.0], [140.0, 74.0, 270.0, 84.0]];
        let b: Vec<[f32; 4]> = left.iter().chain(&right).chain(&quote).copied().collect();
        assert_eq!(order(&b), (0..26).collect::<Vec<_>>());
    }

    #[test]
    fn a_tall_box_beside_two_rows_does_not_join_them() {
        // Two text lines and, to their right, a picture read as one tall "line" beside both.
        let b = [[0.0, 0.0, 100.0, 10.0], [150.0, -20.0, 170.0, 40.0], [0.0, 14.0, 110.0, 24.0]];
        assert_eq!(order(&b), vec![0, 1, 2]);
    }

    #[test]
    fn receipt_with_full_width_lines_across_its_columns_stays_in_row_order() {
        // Receipt: name and price per row, with full-width lines between groups of rows; too
        // narrow for a bridged gutter.
        let mut b = Vec::new();
        for i in 0..12 {
            let y = i as f32 * 12.0;
            if i % 4 == 0 {
                b.push([0.0, y, 200.0, y + 10.0]);
            } else {
                b.push([0.0, y, 80.0, y + 10.0]);
                b.push([150.0, y, 200.0, y + 10.0]);
            }
        }
        assert_eq!(order(&b), (0..b.len()).collect::<Vec<_>>());
    }
}

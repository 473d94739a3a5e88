//! Reading order: recursive XY-cut over the line boxes of an upright page.
//!
//! A region is first split into columns when a vertical gutter at least
//! [`COLUMN_GAP`] x the median line height wide separates groups that each look like a
//! text column (at least [`COLUMN_MIN_WIDTH`] line heights wide and two lines); otherwise
//! it is split into horizontal bands at every vertical gap of at least [`BAND_GAP`] line
//! heights; a region that splits neither way is one block, whose lines are grouped into
//! rows (vertical overlap above half the smaller height) read top to bottom, left to right.
//! The column test keeps receipts and forms (narrow price or value columns) in row order.

/// Minimum gutter between columns, in median line heights.
pub const COLUMN_GAP: f32 = 0.3;
/// Minimum width of a column, in median line heights.
pub const COLUMN_MIN_WIDTH: f32 = 6.0;
/// Minimum vertical gap between bands (paragraphs, headings), in median line heights.
pub const BAND_GAP: f32 = 0.6;

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
    let boxes = &core[..];
    let mut out = Vec::new();
    cut((0..boxes.len()).collect(), boxes, med, &mut out, 0);
    out
}

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

fn extent(ids: &[usize], boxes: &[[f32; 4]], axis: usize) -> f32 {
    let lo = ids.iter().map(|&i| boxes[i][axis]).fold(f32::MAX, f32::min);
    let hi = ids.iter().map(|&i| boxes[i][axis + 2]).fold(f32::MIN, f32::max);
    hi - lo
}

fn cut(ids: Vec<usize>, boxes: &[[f32; 4]], med: f32, out: &mut Vec<Vec<usize>>, depth: usize) {
    if ids.len() <= 1 || depth > 64 {
        if !ids.is_empty() {
            out.push(rows(ids, boxes));
        }
        return;
    }
    let cols = groups(&ids, boxes, 0, COLUMN_GAP * med);
    if cols.len() > 1
        && cols
            .iter()
            .all(|g| g.len() >= 2 && extent(g, boxes, 0) >= COLUMN_MIN_WIDTH * med)
    {
        for g in cols {
            cut(g, boxes, med, out, depth + 1);
        }
        return;
    }
    let bands = groups(&ids, boxes, 1, BAND_GAP * med);
    if bands.len() > 1 {
        for g in bands {
            cut(g, boxes, med, out, depth + 1);
        }
        return;
    }
    out.push(rows(ids, boxes));
}

/// Groups lines into rows and returns them top to bottom, left to right.
fn rows(mut ids: Vec<usize>, boxes: &[[f32; 4]]) -> Vec<usize> {
    ids.sort_by(|&a, &b| {
        let ca = (boxes[a][1] + boxes[a][3]) / 2.0;
        let cb = (boxes[b][1] + boxes[b][3]) / 2.0;
        ca.total_cmp(&cb)
    });
    let mut rows: Vec<Vec<usize>> = Vec::new();
    for id in ids {
        let b = boxes[id];
        let joins = rows.last().is_some_and(|row| {
            let r = boxes[*row.last().unwrap()];
            let overlap = b[3].min(r[3]) - b[1].max(r[1]);
            overlap > 0.5 * (b[3] - b[1]).min(r[3] - r[1])
        });
        if joins {
            rows.last_mut().unwrap().push(id);
        } else {
            rows.push(vec![id]);
        }
    }
    rows.into_iter()
        .flat_map(|mut r| {
            r.sort_by(|&a, &b| boxes[a][0].total_cmp(&boxes[b][0]));
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_columns_are_read_one_after_the_other() {
        // Title across, then two columns of three lines each at the same heights.
        let mut b = vec![[0.0, 0.0, 200.0, 10.0]];
        for i in 0..3 {
            let y = 30.0 + i as f32 * 12.0;
            b.push([0.0, y, 90.0, y + 10.0]);
        }
        for i in 0..3 {
            let y = 30.0 + i as f32 * 12.0;
            b.push([110.0, y, 200.0, y + 10.0]);
        }
        let order: Vec<usize> = reading_order(&b).concat();
        assert_eq!(order, vec![0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn receipt_rows_with_narrow_prices_stay_in_row_order() {
        let mut b = Vec::new();
        for i in 0..4 {
            let y = i as f32 * 12.0;
            b.push([0.0, y, 100.0, y + 10.0]);
            b.push([160.0, y, 190.0, y + 10.0]);
        }
        let order: Vec<usize> = reading_order(&b).concat();
        assert_eq!(order, (0..8).collect::<Vec<_>>());
    }
}

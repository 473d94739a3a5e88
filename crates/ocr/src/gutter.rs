//! Recognised lines made ready for the reading order: lines the detector ran across a column
//! gutter are cut there, and every box is measured in the frame of the page's skew.
//!
//! Why: on a tight layout (a magazine, a 960-px detection input) the detector joins the lines
//! of two columns that sit at the same height into one box, and the XY-cut of [`layout`] can
//! then find no gutter at all: the page came back with its columns interleaved line by line.
//! The recogniser still sees the gutter as a wide gap between two words. A gap is a gutter
//! when it is wide for the line ([`GUTTER_GAP`] line heights) and the lines around it keep
//! the same vertical band of the page clear of words, with text close on both sides (what
//! poppler's column finding looks for); the line is then cut into two lines there.
//!
//! On a skewed scan the axis-aligned envelopes of the lines grow by their width times the
//! skew: neighbouring rows overlap and gutters close. Every box given to [`layout`] is the
//! envelope of the line turned back by the page's skew (the median angle of its long lines).
//!
//! [`layout`]: crate::layout

use crate::det::RotRect;

/// A recognised line: its rectangle, its words (text, confidence, rectangle, runner-ups)
/// and its confidence.
pub type RecLine = (RotRect, Vec<RecWord>, f32);
/// A recognised word: text, confidence, rectangle and runner-ups.
pub type RecWord = (String, f32, RotRect, Vec<crate::Alternative>);

/// A gap between two words of a line is a gutter candidate from this many line heights
/// (a word space is about 0.25; the narrowest gutters measured about 0.7).
pub const GUTTER_GAP: f32 = 0.6;
/// The lines within this many median line heights above and below a candidate are its
/// neighbourhood.
pub const NEIGHBOURHOOD: f32 = 12.0;
/// At least this many neighbouring lines must end close left of the gutter and as many start
/// close right of it (close: within [`GUTTER_REACH`] line heights).
pub const GUTTER_SUPPORT: usize = 3;
/// How close to the gutter a column's text must come, in line heights (ragged right text ends
/// a few words short of its column's edge).
pub const GUTTER_REACH: f32 = 6.0;

/// The page's skew in radians: the median angle of the lines at least four times as long as
/// high (0 without any).
pub fn page_skew(rects: &[RotRect]) -> f32 {
    let mut angles: Vec<f32> = rects.iter().filter(|r| r.w >= 4.0 * r.h).map(|r| r.angle).collect();
    if angles.is_empty() {
        return 0.0;
    }
    angles.sort_by(f32::total_cmp);
    angles[angles.len() / 2]
}

/// The axis-aligned envelope `[x0, y0, x1, y1]` of `r` in the page turned by `-skew`.
pub fn deskewed(r: &RotRect, skew: f32) -> [f32; 4] {
    let (s, c) = (-skew).sin_cos();
    let mut e = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
    for p in r.corners() {
        let (x, y) = (p[0] * c - p[1] * s, p[0] * s + p[1] * c);
        e = [e[0].min(x), e[1].min(y), e[2].max(x), e[3].max(y)];
    }
    e
}

/// Cuts the lines at column gutters and orders them: returns the lines (cut ones replaced
/// by their parts, in place) and the blocks of line indexes in reading order.
pub fn arrange(lines: Vec<RecLine>) -> (Vec<RecLine>, Vec<Vec<usize>>) {
    let skew = page_skew(&lines.iter().map(|l| l.0).collect::<Vec<_>>());
    let lines = cut_at_gutters(lines, skew);
    // Boxes from the words' extents: the detector's boxes are grown ("unclipped") on every
    // side, so the lines of two columns overlap across a narrow gutter (LaTeX's, 30 px at
    // 300 dpi) and the XY-cut found no gap.
    let envs: Vec<[f32; 4]> = lines.iter().map(|l| deskewed(&fitted(l), skew)).collect();
    let order = crate::layout::reading_order(&envs);
    (lines, order)
}

/// Deskewed word boxes of one line, left to right, with the line's height.
struct Deskewed {
    words: Vec<[f32; 4]>,
    height: f32,
    cy: f32,
}

/// Splits every line whose word gap lies on a column gutter (see the module's doc).
pub fn cut_at_gutters(lines: Vec<RecLine>, skew: f32) -> Vec<RecLine> {
    let pages: Vec<Deskewed> = lines
        .iter()
        .map(|l| {
            let e = deskewed(&l.0, skew);
            let words = l.1.iter().map(|w| deskewed(&w.2, skew)).collect();
            Deskewed { words, height: (e[3] - e[1]).min(l.0.h.max(1.0)), cy: (e[1] + e[3]) / 2.0 }
        })
        .collect();
    let mut hs: Vec<f32> = pages.iter().map(|d| d.height).collect();
    hs.sort_by(f32::total_cmp);
    let med = hs.get(hs.len() / 2).copied().unwrap_or(1.0).max(1.0);
    let mut out = Vec::with_capacity(lines.len());
    for (i, line) in lines.into_iter().enumerate() {
        let d = &pages[i];
        // Word indexes after which the line is cut.
        let cuts: Vec<usize> = (0..d.words.len().saturating_sub(1))
            .filter(|&k| {
                let (a, b) = (d.words[k][2], d.words[k + 1][0]);
                b - a >= GUTTER_GAP * d.height && is_gutter(&pages, i, (a + b) / 2.0, med)
            })
            .collect();
        if cuts.is_empty() {
            out.push(line);
        } else {
            out.extend(split(line, &cuts));
        }
    }
    out
}

/// Whether the vertical band at `x` is clear of the words of the lines around line `i`, with
/// text coming close to it on both sides.
fn is_gutter(pages: &[Deskewed], i: usize, x: f32, med: f32) -> bool {
    let cy = pages[i].cy;
    let (mut left, mut right, mut crossing, mut near) = (0usize, 0usize, 0usize, 0usize);
    for (j, d) in pages.iter().enumerate() {
        if (d.cy - cy).abs() > NEIGHBOURHOOD * med {
            continue;
        }
        near += 1;
        let pad = 0.1 * d.height;
        if d.words.iter().any(|w| w[0] < x - pad && w[2] > x + pad) {
            crossing += 1;
            continue;
        }
        let reach = GUTTER_REACH * d.height;
        if j != i || d.words.len() > 1 {
            left += d.words.iter().any(|w| w[2] <= x && w[2] >= x - reach) as usize;
            right += d.words.iter().any(|w| w[0] >= x && w[0] <= x + reach) as usize;
        }
    }
    crossing * 10 <= near && left >= GUTTER_SUPPORT && right >= GUTTER_SUPPORT
}

/// The line's rectangle cut to the extent of its words along it.
fn fitted(line: &RecLine) -> RotRect {
    if line.1.is_empty() {
        return line.0;
    }
    let (u, _) = line.0.axes();
    let r = line.0;
    let along = |w: &RotRect| (w.cx - r.cx) * u[0] + (w.cy - r.cy) * u[1];
    let a = line.1.iter().map(|w| along(&w.2) - w.2.w / 2.0).fold(f32::MAX, f32::min);
    let b = line.1.iter().map(|w| along(&w.2) + w.2.w / 2.0).fold(f32::MIN, f32::max);
    let mid = (a + b) / 2.0;
    RotRect { cx: r.cx + u[0] * mid, cy: r.cy + u[1] * mid, w: b - a, ..r }
}

/// The parts of `line` between the cuts (word indexes after which it is cut).
fn split(line: RecLine, cuts: &[usize]) -> Vec<RecLine> {
    let (r, words, _) = line;
    let mut parts = Vec::new();
    let mut start = 0;
    for end in cuts.iter().map(|&k| k + 1).chain([words.len()]) {
        let ws: Vec<RecWord> = words[start..end].to_vec();
        start = end;
        let chars: Vec<(f32, usize)> = ws.iter().map(|w| (w.1, w.0.chars().count().max(1))).collect();
        let n: usize = chars.iter().map(|c| c.1).sum();
        let conf = chars.iter().map(|c| c.0 * c.1 as f32).sum::<f32>() / n.max(1) as f32;
        let rect = fitted(&(r, ws.clone(), conf));
        parts.push((rect, ws, conf));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x0: f32, y0: f32, x1: f32, y1: f32) -> RotRect {
        RotRect { cx: (x0 + x1) / 2.0, cy: (y0 + y1) / 2.0, w: x1 - x0, h: y1 - y0, angle: 0.0 }
    }

    /// A line of words `[(x0, x1)]` at `y`, 10 high.
    fn line(y: f32, words: &[(f32, f32)]) -> RecLine {
        let ws = words.iter().map(|&(a, b)| (format!("w{a}"), 0.9, rect(a, y, b, y + 10.0), Vec::new())).collect();
        (rect(words[0].0, y, words.last().unwrap().1, y + 10.0), ws, 0.9)
    }

    fn texts(lines: &[RecLine], order: &[Vec<usize>]) -> Vec<String> {
        order.concat().iter().map(|&i| lines[i].1.iter().map(|w| w.0.clone()).collect::<Vec<_>>().join(" ")).collect()
    }

    #[test]
    fn lines_joined_across_a_gutter_are_cut_and_the_columns_read_in_turn() {
        // Two columns (0-90, 110-200); every row detected as one line across both.
        let lines: Vec<RecLine> = (0..6)
            .map(|i| line(i as f32 * 12.0, &[(0.0, 40.0), (44.0, 90.0), (110.0, 150.0), (154.0, 200.0)]))
            .collect();
        let (lines, order) = arrange(lines);
        assert_eq!(lines.len(), 12);
        let t = texts(&lines, &order);
        assert!(t[..6].iter().all(|s| s == "w0 w44"), "{t:?}");
        assert!(t[6..].iter().all(|s| s == "w110 w154"), "{t:?}");
    }

    #[test]
    fn a_wide_word_gap_in_one_line_of_a_single_column_is_not_a_gutter() {
        // A single column whose third line has a wide gap (a tab, a justified stretch).
        let mut lines: Vec<RecLine> = (0..6).map(|i| line(i as f32 * 12.0, &[(0.0, 95.0), (99.0, 200.0)])).collect();
        lines[2] = line(24.0, &[(0.0, 60.0), (120.0, 200.0)]);
        assert_eq!(cut_at_gutters(lines, 0.0).len(), 6);
    }

    #[test]
    fn a_skewed_two_column_page_is_read_column_by_column() {
        // Two columns of eight lines turned by 3 degrees: upright envelopes overlap row to row.
        let a = 3f32.to_radians();
        let mut lines = Vec::new();
        for (x0, x1) in [(0.0, 280.0), (300.0, 580.0)] {
            for i in 0..8 {
                let (cx, cy) = ((x0 + x1) / 2.0, i as f32 * 13.0);
                let (s, c) = a.sin_cos();
                let r = RotRect { cx: cx * c - cy * s, cy: cx * s + cy * c, w: x1 - x0, h: 10.0, angle: a };
                lines.push((r, vec![(format!("{x0}-{i}"), 0.9, r, Vec::new())], 0.9));
            }
        }
        let (lines, order) = arrange(lines);
        let t = texts(&lines, &order);
        let want: Vec<String> =
            [0.0, 300.0].iter().flat_map(|x: &f32| (0..8).map(move |i| format!("{x}-{i}"))).collect();
        assert_eq!(t, want);
    }
}

//! How a page's line crops are put into recognition runs: batches of similar widths for
//! ONNX Runtime's kernels, one line per run on a grid of widths for OpenVINO's.

use crate::REC_MAX_WIDTH;

/// How lines are put into recognition runs. ONNX Runtime's kernels take any input shape at
/// the same cost per column, so lines of similar widths share a batch ([`batch_by_width`],
/// [`BATCH_MAX_LINES`]). OpenVINO prepares its kernels for each input shape it has not run
/// before (measured on the recogniser: a new shape's run takes 2-3x a known one's), and a
/// page's batches were almost all new shapes (115 of 118 over the 7 corpus pages); so with
/// OpenVINO each line is a run of its own, its width rounded up on a grid
/// ([`OPENVINO_WIDTH_STEPS`]): runs take their shapes from [`BatchPolicy::run_widths`] (26 of
/// them), which `Ocr::new` runs once at load. A line alone costs about as much per column as
/// in a batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BatchPolicy {
    /// Most lines a run holds.
    pub max_lines: usize,
    /// `(up to, step)`: run widths up to `up to` columns are multiples of `step`; the first
    /// tier that holds a width applies.
    pub width_steps: &'static [(usize, usize)],
}

/// The grid of run widths with OpenVINO: multiples of 64 up to 1,024 columns, of 128 up to
/// 2,048, of 256 above (and [`REC_MAX_WIDTH`]). OpenVINO keeps memory for each shape it has
/// run (about 2.5 MB a shape, more for wide ones): 43 widths in steps of 64 took a session
/// from 118 to 273 MB, these 26 to about 230 MB. Steps of 64 left 25 shapes over the 7 corpus
/// pages' 455 lines (32: 44), for 10% more columns than the crops' own; the evaluation set
/// read the same (docs/ocr.md, "Runtime").
pub(crate) const OPENVINO_WIDTH_STEPS: &[(usize, usize)] = &[(1024, 64), (2048, 128), (usize::MAX, 256)];

impl BatchPolicy {
    /// Batches of similar widths, of exact widths (ONNX Runtime's kernels).
    pub(crate) const BATCHES: Self = Self { max_lines: BATCH_MAX_LINES, width_steps: &[(usize::MAX, 1)] };
    /// One line per run, widths on a grid (OpenVINO's).
    pub(crate) const ONE_LINE_ON_A_GRID: Self = Self { max_lines: 1, width_steps: OPENVINO_WIDTH_STEPS };

    /// The input width of a run whose widest crop is `widest` columns: at least `narrowest`,
    /// rounded up on the grid, and no wider than the widest crop can be.
    pub(crate) fn run_width(self, widest: usize, narrowest: usize) -> usize {
        let w = widest.max(narrowest);
        let step = self.width_steps.iter().find(|&&(up_to, _)| w <= up_to).map_or(1, |&(_, step)| step.max(1));
        (w.div_ceil(step) * step).min(REC_MAX_WIDTH.max(w))
    }

    /// Every width a run can have (crops are at most [`REC_MAX_WIDTH`] wide), ascending.
    pub(crate) fn run_widths(self, narrowest: usize) -> Vec<usize> {
        let mut widths: Vec<usize> = (0..=REC_MAX_WIDTH).map(|w| self.run_width(w, narrowest)).collect();
        widths.dedup();
        widths
    }
}

/// Most lines a recognition batch holds.
pub(crate) const BATCH_MAX_LINES: usize = 24;
/// Most input columns (lines x padded width) a batch holds, unless one line is wider.
pub(crate) const BATCH_MAX_COLUMNS: usize = 320 * 16;
/// What one more model run costs, in input columns (ONNX Runtime's per-run work: session
/// dispatch, buffers, thread hand-over; measured flat per column across batch sizes, so small).
pub(crate) const RUN_COST_COLUMNS: usize = 48;

/// Splits crops of ascending widths `w` (already raised to the narrowest batch) into
/// consecutive batches `(start, end)` that minimise the padded columns computed (each batch
/// is as wide as its widest crop) plus [`RUN_COST_COLUMNS`] per batch: a dynamic programme
/// over the split points, within `max_lines` and [`BATCH_MAX_COLUMNS`]. Why: the
/// recogniser's time is proportional to the columns it is given, padding included; greedy
/// batches (filled up to the limits) padded short lines to the width of the longest.
pub(crate) fn batch_by_width(w: &[usize], max_lines: usize) -> Vec<(usize, usize)> {
    let n = w.len();
    let mut best = vec![usize::MAX; n + 1];
    let mut from = vec![0usize; n + 1];
    best[0] = 0;
    for end in 1..=n {
        let widest = w[end - 1];
        for start in (end.saturating_sub(max_lines.max(1))..end).rev() {
            let lines = end - start;
            if lines > 1 && lines * widest > BATCH_MAX_COLUMNS {
                break;
            }
            let cost = best[start] + lines * widest + RUN_COST_COLUMNS;
            if cost < best[end] {
                best[end] = cost;
                from[end] = start;
            }
        }
    }
    let mut out = Vec::new();
    let mut end = n;
    while end > 0 {
        out.push((from[end], end));
        end = from[end];
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Padding is what the split minimises: a short line is not padded to a long one's width.
    #[test]
    fn batches_by_width_keep_short_lines_from_being_padded_to_long_ones() {
        let w = [160, 160, 170, 1200, 1210];
        let b = batch_by_width(&w, BATCH_MAX_LINES);
        assert_eq!(b, vec![(0, 3), (3, 5)]);
        let padded: usize = b.iter().map(|&(s, e)| (e - s) * w[e - 1]).sum();
        assert_eq!(padded, 3 * 170 + 2 * 1210);
    }

    /// Every crop is in exactly one batch, in order, within the limits.
    #[test]
    fn batches_by_width_cover_every_crop_within_the_limits() {
        let w: Vec<usize> = (0..100).map(|i| 160 + i * i).collect();
        let b = batch_by_width(&w, BATCH_MAX_LINES);
        let mut next = 0;
        for &(s, e) in &b {
            assert_eq!(s, next);
            assert!(e > s && e - s <= BATCH_MAX_LINES);
            assert!(e - s == 1 || (e - s) * w[e - 1] <= BATCH_MAX_COLUMNS, "{s}..{e}");
            next = e;
        }
        assert_eq!(next, w.len());
    }

    /// With OpenVINO's policy every line is a run of its own, and every run width is one of
    /// the grid's (the shapes `Ocr::new` runs at load), from the narrowest batch up.
    #[test]
    fn one_line_runs_take_their_widths_from_the_grid_run_at_load() {
        let p = BatchPolicy::ONE_LINE_ON_A_GRID;
        let grid = p.run_widths(160);
        assert_eq!(grid.first(), Some(&192));
        assert_eq!(grid.last(), Some(&REC_MAX_WIDTH));
        assert_eq!(grid.len(), 26);
        assert!(grid.windows(2).all(|w| w[0] < w[1]));
        for w in [1, 16, 160, 191, 192, 193, 700, 1025, 2047, 2049, 2817, REC_MAX_WIDTH - 1, REC_MAX_WIDTH] {
            let r = p.run_width(w, 160);
            assert!(grid.contains(&r) && r >= w, "{w} -> {r}");
        }
        let w: Vec<usize> = (0..20).map(|i| 160 + 7 * i).collect();
        assert!(batch_by_width(&w, p.max_lines).iter().all(|&(s, e)| e == s + 1));
        // ONNX Runtime's policy keeps exact widths.
        assert_eq!(BatchPolicy::BATCHES.run_width(701, 160), 701);
        assert_eq!(BatchPolicy::BATCHES.run_width(100, 160), 160);
    }
}

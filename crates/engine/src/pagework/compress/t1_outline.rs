//! Running a Type 1 charstring into an outline in absolute coordinates: subroutines
//! inlined, flex turned into its two curves, `div` evaluated, hint replacement marked.
//!
//! The outline is what `t2_write.rs` encodes as a Type 2 charstring. Points follow
//! FreeType's Type 1 reading: `hsbw`/`sbw` put the current point at the side bearing,
//! `closepath` closes the contour without moving the current point, `seac` places the
//! accent at `adx - asb` from the composite's side bearing point. An operator this does
//! not know (multiple-master othersubrs, a stack underflow) gives `None`.

/// One element of an outline.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Move(f64, f64),
    Line(f64, f64),
    /// Two control points and the end point.
    Curve([f64; 6]),
    /// A stem hint: horizontal (`y`, height) or vertical (`x`, width), absolute.
    Stem {
        horizontal: bool,
        pos: f64,
        width: f64,
    },
    /// Hint replacement: the stems that follow replace the active ones.
    Replace,
}

/// A glyph: its advance width, outline and, for an accented composite (`seac`), the
/// accent's offset and the StandardEncoding codes of base and accent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outline {
    pub width: f64,
    pub ops: Vec<Op>,
    pub seac: Option<(f64, f64, u8, u8)>,
}

type Flex = (f64, f64, Vec<(f64, f64)>);

struct Run<'a> {
    subrs: &'a [Vec<u8>],
    stack: Vec<f64>,
    x: f64,
    y: f64,
    sbx: f64,
    sby: f64,
    width: Option<f64>,
    open: bool,
    ops: Vec<Op>,
    /// Flex in progress: its start point and the points collected.
    flex: Option<Flex>,
    /// Values an othersubr left for `pop`, in the order `pop` takes them.
    results: Vec<f64>,
    seac: Option<(f64, f64, u8, u8)>,
    done: bool,
}

/// Runs `cs` (decrypted) with the font's subroutines.
pub(crate) fn outline(cs: &[u8], subrs: &[Vec<u8>]) -> Option<Outline> {
    let mut r = Run {
        subrs,
        stack: Vec::new(),
        x: 0.0,
        y: 0.0,
        sbx: 0.0,
        sby: 0.0,
        width: None,
        open: false,
        ops: Vec::new(),
        flex: None,
        results: Vec::new(),
        seac: None,
        done: false,
    };
    r.exec(cs, 0)?;
    Some(Outline { width: r.width?, ops: r.ops, seac: r.seac })
}

impl Run<'_> {
    fn pop(&mut self) -> Option<f64> {
        self.stack.pop()
    }

    fn args<const N: usize>(&mut self) -> Option<[f64; N]> {
        if self.stack.len() < N {
            return None;
        }
        let v = self.stack.split_off(self.stack.len() - N);
        self.stack.clear();
        v.try_into().ok()
    }

    fn move_by(&mut self, dx: f64, dy: f64) {
        self.x += dx;
        self.y += dy;
        if self.flex.is_none() {
            self.open = false;
        }
    }

    fn start(&mut self) {
        if !self.open {
            self.ops.push(Op::Move(self.x, self.y));
            self.open = true;
        }
    }

    fn line_by(&mut self, dx: f64, dy: f64) {
        self.start();
        self.x += dx;
        self.y += dy;
        self.ops.push(Op::Line(self.x, self.y));
    }

    fn curve_by(&mut self, d: [f64; 6]) {
        self.start();
        let (x1, y1) = (self.x + d[0], self.y + d[1]);
        let (x2, y2) = (x1 + d[2], y1 + d[3]);
        self.x = x2 + d[4];
        self.y = y2 + d[5];
        self.ops.push(Op::Curve([x1, y1, x2, y2, self.x, self.y]));
    }

    fn stem(&mut self, horizontal: bool, pos: f64, width: f64) {
        let pos = pos + if horizontal { self.sby } else { self.sbx };
        self.ops.push(Op::Stem { horizontal, pos, width });
    }

    fn exec(&mut self, cs: &[u8], depth: usize) -> Option<()> {
        if depth > 10 {
            return None;
        }
        let mut i = 0;
        while i < cs.len() && !self.done {
            let b = cs[i];
            i += 1;
            if b >= 32 {
                let v = match b {
                    32..=246 => b as f64 - 139.0,
                    247..=250 => ((b as f64 - 247.0) * 256.0) + *cs.get(i)? as f64 + 108.0,
                    251..=254 => -((b as f64 - 251.0) * 256.0) - *cs.get(i)? as f64 - 108.0,
                    _ => i32::from_be_bytes(cs.get(i..i + 4)?.try_into().ok()?) as f64,
                };
                i += match b {
                    32..=246 => 0,
                    255 => 4,
                    _ => 1,
                };
                if self.stack.len() >= 64 {
                    return None;
                }
                self.stack.push(v);
                continue;
            }
            match b {
                1 => {
                    let [y, dy] = self.args()?;
                    self.stem(true, y, dy);
                }
                3 => {
                    let [x, dx] = self.args()?;
                    self.stem(false, x, dx);
                }
                4 => {
                    let [dy] = self.args()?;
                    self.move_by(0.0, dy);
                }
                5 => {
                    let [dx, dy] = self.args()?;
                    self.line_by(dx, dy);
                }
                6 => {
                    let [dx] = self.args()?;
                    self.line_by(dx, 0.0);
                }
                7 => {
                    let [dy] = self.args()?;
                    self.line_by(0.0, dy);
                }
                8 => {
                    let d = self.args::<6>()?;
                    self.curve_by(d);
                }
                9 => {
                    self.stack.clear();
                    self.open = false;
                }
                10 => {
                    let n = self.pop()?;
                    let sub = self.subrs.get(usize::try_from(n as i64).ok()?)?;
                    self.exec(sub, depth + 1)?;
                }
                11 => return Some(()),
                13 => {
                    let [sbx, wx] = self.args()?;
                    (self.sbx, self.sby, self.x, self.y) = (sbx, 0.0, sbx, 0.0);
                    self.width = Some(wx);
                }
                14 => {
                    self.stack.clear();
                    self.done = true;
                }
                21 => {
                    let [dx, dy] = self.args()?;
                    self.move_by(dx, dy);
                }
                22 => {
                    let [dx] = self.args()?;
                    self.move_by(dx, 0.0);
                }
                30 => {
                    let [dy1, dx2, dy2, dx3] = self.args()?;
                    self.curve_by([0.0, dy1, dx2, dy2, dx3, 0.0]);
                }
                31 => {
                    let [dx1, dx2, dy2, dy3] = self.args()?;
                    self.curve_by([dx1, 0.0, dx2, dy2, 0.0, dy3]);
                }
                12 => {
                    let e = *cs.get(i)?;
                    i += 1;
                    self.escape(e)?;
                }
                _ => return None,
            }
        }
        Some(())
    }

    fn escape(&mut self, e: u8) -> Option<()> {
        match e {
            0 => self.stack.clear(),
            1 | 2 => {
                let v = self.args::<6>()?;
                for k in 0..3 {
                    self.stem(e == 2, v[2 * k], v[2 * k + 1]);
                }
            }
            6 => {
                let [asb, adx, ady, bchar, achar] = self.args()?;
                if !(0.0..256.0).contains(&bchar) || !(0.0..256.0).contains(&achar) {
                    return None;
                }
                self.seac = Some((adx + self.sbx - asb, ady, bchar as u8, achar as u8));
                self.done = true;
            }
            7 => {
                let [sbx, sby, wx, _wy] = self.args()?;
                (self.sbx, self.sby, self.x, self.y) = (sbx, sby, sbx, sby);
                self.width = Some(wx);
            }
            12 => {
                let b = self.pop()?;
                let a = self.pop()?;
                if b == 0.0 {
                    return None;
                }
                self.stack.push(a / b);
            }
            16 => self.othersubr()?,
            17 => {
                if self.results.is_empty() {
                    return None;
                }
                let v = self.results.remove(0);
                self.stack.push(v);
            }
            33 => {
                let [x, y] = self.args()?;
                (self.x, self.y) = (x, y);
            }
            _ => return None,
        }
        Some(())
    }

    fn othersubr(&mut self) -> Option<()> {
        let k = self.pop()?;
        let n = self.pop()?;
        if !(0.0..=16.0).contains(&n) || self.stack.len() < n as usize {
            return None;
        }
        let args = self.stack.split_off(self.stack.len() - n as usize);
        self.results.clear();
        match k as i32 {
            // Flex: the reference point and six curve points collected by othersubr 2.
            1 => self.flex = Some((self.x, self.y, Vec::new())),
            2 => self.flex.as_mut()?.2.push((self.x, self.y)),
            0 => {
                let (sx, sy, p) = self.flex.take()?;
                if p.len() != 7 || args.len() != 3 {
                    return None;
                }
                (self.x, self.y) = (sx, sy);
                self.start();
                self.ops.push(Op::Curve([p[1].0, p[1].1, p[2].0, p[2].1, p[3].0, p[3].1]));
                self.ops.push(Op::Curve([p[4].0, p[4].1, p[5].0, p[5].1, p[6].0, p[6].1]));
                (self.x, self.y) = p[6];
                self.results = vec![args[1], args[2]];
            }
            3 => {
                self.ops.push(Op::Replace);
                self.results = vec![*args.first()?];
            }
            // Counter control: hints only.
            12 | 13 => {}
            _ => return None,
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(v: i32) -> Vec<u8> {
        vec![(v + 139) as u8]
    }

    #[test]
    fn hsbw_places_the_first_point_at_the_side_bearing() {
        // 10 500 hsbw 5 0 rmoveto 20 hlineto closepath endchar
        let cs = [n(10), n(50), vec![13], n(5), n(0), vec![21], n(20), vec![6, 9, 14]].concat();
        let o = outline(&cs, &[]).unwrap();
        assert_eq!(o.width, 50.0);
        assert_eq!(o.ops, vec![Op::Move(15.0, 0.0), Op::Line(35.0, 0.0)]);
    }

    #[test]
    fn div_and_subroutines_are_evaluated() {
        // 0 100 hsbw 7 2 div 0 rmoveto 0 callsubr endchar; subr 0: 10 vlineto return
        let cs = [n(0), n(100), vec![13], n(7), n(2), vec![12, 12], n(0), vec![21], n(0), vec![10, 14]].concat();
        let subr = [n(10), vec![7, 11]].concat();
        let o = outline(&cs, &[subr]).unwrap();
        assert_eq!(o.ops, vec![Op::Move(3.5, 0.0), Op::Line(3.5, 10.0)]);
    }
}

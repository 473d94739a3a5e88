//! Encoding an outline (`t1_outline.rs`) as a Type 2 (CFF) charstring: the width as
//! the first argument when it is not the default, stem hints first (with `hintmask`
//! where the Type 1 glyph replaced its hints), then the path with the short operators.
//!
//! Coordinates are written as deltas from the previously written point, rounded to the
//! 16.16 fixed values Type 2 carries, so rounding never accumulates. Lines alternating
//! horizontal and vertical become `hlineto`/`vlineto` runs, curves starting and ending
//! on an axis `hvcurveto`/`vhcurveto` chains; `closepath` is implicit in Type 2.

use super::t1_outline::{Op, Outline};

/// Operand limit of a Type 2 operator (the stack holds 48; room left for the width).
const MAX_ARGS: usize = 44;

fn fixed(v: f64) -> f64 {
    (v * 65536.0).round() / 65536.0
}

/// Appends a Type 2 number.
pub(crate) fn number(out: &mut Vec<u8>, v: f64) {
    let v = fixed(v);
    if v.fract() == 0.0 && (-32768.0..=32767.0).contains(&v) {
        let i = v as i32;
        match i {
            -107..=107 => out.push((i + 139) as u8),
            108..=1131 => {
                let j = i - 108;
                out.extend([(j / 256 + 247) as u8, (j % 256) as u8]);
            }
            -1131..=-108 => {
                let j = -i - 108;
                out.extend([(j / 256 + 251) as u8, (j % 256) as u8]);
            }
            _ => {
                out.push(28);
                out.extend((i as i16).to_be_bytes());
            }
        }
    } else {
        out.push(255);
        out.extend(((v * 65536.0).round() as i32).to_be_bytes());
    }
}

fn emit(out: &mut Vec<u8>, args: &[f64], op: &[u8]) {
    for &a in args {
        number(out, a);
    }
    out.extend_from_slice(op);
}

#[derive(Clone, Copy)]
enum Seg {
    Line(f64, f64),
    Curve([f64; 6]),
}

/// The glyph's stems (horizontal first, each group sorted) and, per drawing position,
/// the active set when hints are replaced; `None` when the hints cannot be written
/// (too many), then the glyph goes without.
#[allow(clippy::type_complexity)]
fn stems(ops: &[Op]) -> Option<(Vec<(f64, f64)>, Vec<(f64, f64)>, bool)> {
    let mut h: Vec<(f64, f64)> = Vec::new();
    let mut v: Vec<(f64, f64)> = Vec::new();
    let mut masked = false;
    let mut drawn = false;
    for op in ops {
        match *op {
            Op::Stem { horizontal, pos, width } => {
                masked |= drawn;
                let list = if horizontal { &mut h } else { &mut v };
                if !list.contains(&(pos, width)) {
                    list.push((pos, width));
                }
            }
            Op::Replace => masked = true,
            _ => drawn = true,
        }
    }
    h.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    (h.len() <= 22 && v.len() <= 22).then_some((h, v, masked))
}

fn stem_args(list: &[(f64, f64)]) -> Vec<f64> {
    let mut edge = 0.0;
    let mut args = Vec::new();
    for &(pos, w) in list {
        args.push(fixed(pos) - edge);
        args.push(fixed(w));
        edge = fixed(pos) + fixed(w);
    }
    args
}

/// Encodes `o`; `default_w`/`nominal_w` are the Private DICT's width values.
pub(crate) fn charstring(o: &Outline, default_w: f64, nominal_w: f64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut width = (o.width != default_w).then_some(o.width - nominal_w);
    let mut first = |args: Vec<f64>| -> Vec<f64> {
        match width.take() {
            Some(w) => std::iter::once(w).chain(args).collect(),
            None => args,
        }
    };
    let hints = stems(&o.ops);
    let (h, v, mut masked) = hints.unwrap_or_default();
    masked &= !(h.is_empty() && v.is_empty());
    if !h.is_empty() {
        emit(&mut out, &first(stem_args(&h)), if masked { &[18] } else { &[1] });
    }
    if !v.is_empty() {
        emit(&mut out, &first(stem_args(&v)), if masked { &[23] } else { &[3] });
    }
    let nstems = h.len() + v.len();
    let mut active: Vec<bool> = vec![false; nstems];
    let mut replacing = false;
    let mut mask_written: Option<Vec<bool>> = None;
    let (mut px, mut py) = (0.0f64, 0.0f64);
    let mut segs: Vec<Seg> = Vec::new();
    let flush = |out: &mut Vec<u8>, segs: &mut Vec<Seg>| {
        path(out, segs);
        segs.clear();
    };
    for op in &o.ops {
        match *op {
            Op::Stem { horizontal, pos, width: w } => {
                if masked {
                    if replacing {
                        active.iter_mut().for_each(|a| *a = false);
                        replacing = false;
                    }
                    let k = if horizontal {
                        h.iter().position(|s| *s == (pos, w))
                    } else {
                        v.iter().position(|s| *s == (pos, w)).map(|k| k + h.len())
                    };
                    if let Some(k) = k {
                        active[k] = true;
                    }
                }
            }
            Op::Replace => replacing = true,
            Op::Move(..) | Op::Line(..) | Op::Curve(_) => {
                if masked && mask_written.as_ref() != Some(&active) {
                    flush(&mut out, &mut segs);
                    let mut bytes = vec![0u8; nstems.div_ceil(8)];
                    for (k, _) in active.iter().enumerate().filter(|a| *a.1) {
                        bytes[k / 8] |= 0x80 >> (k % 8);
                    }
                    emit(&mut out, &first(Vec::new()), &[19]);
                    out.extend(bytes);
                    mask_written = Some(active.clone());
                }
                match *op {
                    Op::Curve(c) => {
                        let mut d = [0.0; 6];
                        for k in 0..3 {
                            d[2 * k] = fixed(c[2 * k] - px);
                            d[2 * k + 1] = fixed(c[2 * k + 1] - py);
                            (px, py) = (px + d[2 * k], py + d[2 * k + 1]);
                        }
                        segs.push(Seg::Curve(d));
                    }
                    Op::Move(x, y) => {
                        let (dx, dy) = (fixed(x - px), fixed(y - py));
                        (px, py) = (px + dx, py + dy);
                        flush(&mut out, &mut segs);
                        if dx == 0.0 {
                            emit(&mut out, &first(vec![dy]), &[4]);
                        } else if dy == 0.0 {
                            emit(&mut out, &first(vec![dx]), &[22]);
                        } else {
                            emit(&mut out, &first(vec![dx, dy]), &[21]);
                        }
                    }
                    Op::Line(x, y) => {
                        let (dx, dy) = (fixed(x - px), fixed(y - py));
                        (px, py) = (px + dx, py + dy);
                        segs.push(Seg::Line(dx, dy));
                    }
                    _ => {}
                }
            }
        }
    }
    flush(&mut out, &mut segs);
    let mut end = first(Vec::new());
    if let Some((adx, ady, b, a)) = o.seac {
        end.extend([adx, ady, b as f64, a as f64]);
    }
    emit(&mut out, &end, &[14]);
    out
}

/// Writes the segments of a contour with the shortest operators.
fn path(out: &mut Vec<u8>, segs: &[Seg]) {
    let mut i = 0;
    while i < segs.len() {
        match segs[i] {
            Seg::Line(dx, dy) if dx == 0.0 || dy == 0.0 => {
                // Alternating horizontal/vertical run.
                let mut horizontal = dy == 0.0;
                let op = if horizontal { 6 } else { 7 };
                let mut args = Vec::new();
                while let Some(Seg::Line(dx, dy)) = segs.get(i) {
                    let ok = if horizontal { *dy == 0.0 } else { *dx == 0.0 };
                    if !ok || args.len() >= MAX_ARGS {
                        break;
                    }
                    args.push(if horizontal { *dx } else { *dy });
                    horizontal = !horizontal;
                    i += 1;
                }
                emit(out, &args, &[op]);
            }
            Seg::Line(..) => {
                let mut args = Vec::new();
                while let Some(Seg::Line(dx, dy)) = segs.get(i) {
                    if *dx == 0.0 || *dy == 0.0 || args.len() >= MAX_ARGS {
                        break;
                    }
                    args.extend([*dx, *dy]);
                    i += 1;
                }
                emit(out, &args, &[5]);
            }
            Seg::Curve(c) if c[1] == 0.0 || c[0] == 0.0 => {
                let mut horizontal = c[1] == 0.0;
                let op = if horizontal { 31 } else { 30 };
                let mut args = Vec::new();
                while let Some(Seg::Curve(c)) = segs.get(i) {
                    let starts = if horizontal { c[1] == 0.0 } else { c[0] == 0.0 };
                    if !starts || args.len() + 5 > MAX_ARGS {
                        break;
                    }
                    i += 1;
                    if horizontal {
                        args.extend([c[0], c[2], c[3], c[5]]);
                        if c[4] != 0.0 {
                            args.push(c[4]);
                            break;
                        }
                    } else {
                        args.extend([c[1], c[2], c[3], c[4]]);
                        if c[5] != 0.0 {
                            args.push(c[5]);
                            break;
                        }
                    }
                    horizontal = !horizontal;
                }
                emit(out, &args, &[op]);
            }
            Seg::Curve(_) => {
                let mut args = Vec::new();
                while let Some(Seg::Curve(c)) = segs.get(i) {
                    if c[1] == 0.0 || c[0] == 0.0 || args.len() + 6 > MAX_ARGS {
                        break;
                    }
                    args.extend(c);
                    i += 1;
                }
                emit(out, &args, &[8]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_use_the_shortest_type2_forms() {
        let enc = |v: f64| {
            let mut o = Vec::new();
            number(&mut o, v);
            o
        };
        assert_eq!(enc(0.0), vec![139]);
        assert_eq!(enc(108.0), vec![247, 0]);
        assert_eq!(enc(-108.0), vec![251, 0]);
        assert_eq!(enc(2000.0), vec![28, 0x07, 0xd0]);
        assert_eq!(enc(0.5), vec![255, 0, 0, 0x80, 0]);
    }

    #[test]
    fn a_square_becomes_alternating_line_runs() {
        let o = Outline {
            width: 500.0,
            ops: vec![Op::Move(10.0, 0.0), Op::Line(20.0, 0.0), Op::Line(20.0, 10.0), Op::Line(10.0, 10.0)],
            seac: None,
        };
        // width-nominal, hmoveto 10; hlineto 10 10 -10; endchar
        let cs = charstring(&o, 0.0, 0.0);
        let mut want = Vec::new();
        emit(&mut want, &[500.0, 10.0], &[22]);
        emit(&mut want, &[10.0, 10.0, -10.0], &[6]);
        want.push(14);
        assert_eq!(cs, want);
    }
}

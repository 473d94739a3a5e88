//! Fraction number formats (`# ?/?`, `?/4`): the part of [`super`] that finds the closest
//! fraction with a bounded denominator.

/// Fraction formats: `# ?/?`, `# ??/??`, `?/4`, `# ?/8`, `0 ??/100` (an optional whole
/// part, then numerator/denominator; a denominator of placeholders is the best one with at
/// most that many digits, a number is fixed). `None` for anything else.
pub(super) fn fraction(value: f64, section: &str, signed: bool) -> Option<String> {
    let body: String = section.chars().filter(|c| !matches!(c, '[' | ']')).collect();
    if !body.contains('/') || section.contains('"') || section.contains('[') {
        return None;
    }
    let is_place = |c: char| matches!(c, '#' | '0' | '?');
    let parts: Vec<&str> = body.split_whitespace().collect();
    let (whole, frac) = match parts.as_slice() {
        [w, f] if w.chars().all(is_place) => (Some(*w), *f),
        [f] => (None, *f),
        _ => return None,
    };
    let (num, den) = frac.split_once('/')?;
    if num.is_empty() || !num.chars().all(is_place) || den.is_empty() {
        return None;
    }
    let fixed: Option<u64> = den.parse().ok().filter(|d| *d > 0);
    if fixed.is_none() && !den.chars().all(is_place) {
        return None;
    }
    let x = value.abs();
    let (mut int, rest) = match whole {
        Some(_) => (x.trunc() as u64, x.fract()),
        None => (0, x),
    };
    let (mut n, d) = match fixed {
        Some(d) => ((rest * d as f64).round() as u64, d),
        None => closest_fraction(rest, 10u64.pow(den.len().min(9) as u32) - 1),
    };
    if whole.is_some() && n == d {
        int += 1;
        n = 0;
    }
    let mut out = String::new();
    if signed && value < 0.0 && (int > 0 || n > 0) {
        out.push('-');
    }
    let pad = |s: String, width: usize, right: bool| {
        let fill = " ".repeat(width.saturating_sub(s.len()));
        if right {
            s + &fill
        } else {
            fill + &s
        }
    };
    match whole {
        Some(_) if n == 0 => {
            // A whole number shows no fraction: its place is kept as spaces.
            out.push_str(&int.to_string());
            out.push_str(&" ".repeat(1 + num.len() + 1 + den.len()));
        }
        Some(w) => {
            if int > 0 || w.contains('0') {
                out.push_str(&int.to_string());
            }
            out.push(' ');
            out.push_str(&pad(n.to_string(), num.len(), false));
            out.push('/');
            out.push_str(&pad(d.to_string(), den.len(), true));
        }
        None => {
            out.push_str(&pad(n.to_string(), num.len(), false));
            out.push('/');
            out.push_str(&pad(d.to_string(), den.len(), true));
        }
    }
    Some(out)
}

/// The fraction n/d closest to `x` (0 <= x < 1 for a whole part, any x >= 0 otherwise) with
/// 1 <= d <= `max`, the smallest d among equally close ones: from the continued fraction of
/// x, its last convergent within `max` or the semiconvergent beyond it (O(log max), where
/// trying every denominator would cost `max` steps per cell).
fn closest_fraction(x: f64, max: u64) -> (u64, u64) {
    let (mut p0, mut q0, mut p1, mut q1) = (0u64, 1u64, 1u64, 0u64);
    let mut r = x;
    loop {
        let a = r.floor();
        if a > 1e15 {
            break;
        }
        let a = a as u64;
        let (p2, q2) = (a.saturating_mul(p1).saturating_add(p0), a.saturating_mul(q1).saturating_add(q0));
        if q2 > max {
            // Best semiconvergent (p0 + k p1)/(q0 + k q1) within `max`, against the convergent.
            let k = (max - q0) / q1.max(1);
            let (ps, qs) = (p0 + k * p1, q0 + k * q1);
            let err = |p: u64, q: u64| (x - p as f64 / q as f64).abs();
            if q1 == 0 || (qs > 0 && err(ps, qs) < err(p1, q1) - 1e-15) {
                return (ps, qs.max(1));
            }
            return (p1, q1);
        }
        (p0, q0, p1, q1) = (p1, q1, p2, q2);
        let f = r - a as f64;
        if f < 1e-12 {
            break;
        }
        r = 1.0 / f;
    }
    (p1, q1.max(1))
}

#[cfg(test)]
mod tests {
    use super::closest_fraction;

    #[test]
    fn closest_fraction_matches_trying_every_denominator() {
        let brute = |x: f64, max: u64| {
            let mut best = (0u64, 1u64, f64::INFINITY);
            for d in 1..=max {
                let n = (x * d as f64).round();
                let err = (x - n / d as f64).abs();
                if err < best.2 - 1e-12 {
                    best = (n as u64, d, err);
                }
            }
            (best.0, best.1)
        };
        for i in 0..2000u32 {
            // Values spread over [0, 1), including exact fractions and near-ties.
            let x = ((i as f64 * 0.6180339887498949) % 1.0 * 1e6).round() / 1e6;
            for max in [9, 99, 999] {
                let (n, d) = closest_fraction(x, max);
                let (bn, bd) = brute(x, max);
                let (e, be) = ((x - n as f64 / d as f64).abs(), (x - bn as f64 / bd as f64).abs());
                assert!(e <= be + 1e-12, "{x} max {max}: {n}/{d} vs {bn}/{bd}");
            }
        }
        assert_eq!(closest_fraction(0.5, 9), (1, 2));
        assert_eq!(closest_fraction(0.14159, 99), (14, 99));
        assert_eq!(closest_fraction(0.0, 9).0, 0);
    }
}

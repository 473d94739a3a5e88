//! Numbers as an Excel number format displays them (the subset the module documentation
//! lists): sections and conditions, `0` `#` `?` placeholders, decimals, thousands grouping
//! and scaling, percent, scientific, quoted/escaped literals, `[$€-407]` currency, `General`.
//! Dates and times never come here (calamine turns date-formatted numbers into date cells,
//! written as ISO 8601). Fractions (`# ?/?`, `?/4`) are rendered too. Formats we do not
//! render (text-only sections, unknown syntax) give `None`, and the caller writes the plain
//! value.

mod fraction;

use fraction::fraction;

/// `value` rendered with the format code `code`, or `None` when `code` is General, empty or
/// uses a feature we do not render.
pub fn format_with_code(value: f64, code: &str) -> Option<String> {
    if !value.is_finite() || code.trim().is_empty() {
        return None;
    }
    let sections = split_sections(code);
    if sections.is_empty() || (sections.len() == 1 && is_general(&sections[0])) {
        return None;
    }
    let (section, signed) = pick_section(&sections, value)?;
    if let Some(text) = fraction(value, section, signed) {
        return Some(text);
    }
    let tokens = tokenize(section)?;
    render(value, &tokens, signed)
}

/// The shortest decimal that has the value rounded to 15 significant digits (what Excel
/// displays in a General cell, without its 11-character width limit).
pub fn format_number(f: f64) -> String {
    if !f.is_finite() {
        return "#NUM!".to_owned();
    }
    if f == 0.0 {
        return "0".to_owned();
    }
    let rounded: f64 = format!("{f:.14e}").parse().unwrap_or(f);
    if rounded.fract() == 0.0 && rounded.abs() < 1e15 {
        return format!("{}", rounded as i64);
    }
    let s = format!("{rounded}");
    // Rust prints very large/small values in full; keep that (no exponent), as Excel's
    // CSV export does for General cells up to its own width limits.
    s
}

fn is_general(section: &str) -> bool {
    section.trim().eq_ignore_ascii_case("general")
}

/// Splits at `;` outside quotes, escapes and brackets.
fn split_sections(code: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut chars = code.chars();
    let mut quoted = false;
    let mut bracket = false;
    while let Some(c) = chars.next() {
        let cur = out.last_mut().expect("never empty");
        match c {
            '"' => quoted = !quoted,
            '[' if !quoted => bracket = true,
            ']' if !quoted => bracket = false,
            '\\' | '_' | '*' if !quoted => {
                cur.push(c);
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
                continue;
            }
            ';' if !quoted && !bracket => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    out
}

/// A `[<100]`-style condition at the start of a section.
fn condition(section: &str) -> Option<(String, f64)> {
    let mut rest = section;
    while let Some(inner) = rest.strip_prefix('[') {
        let end = inner.find(']')?;
        let body = &inner[..end];
        for op in ["<=", ">=", "<>", "<", ">", "="] {
            if let Some(n) = body.strip_prefix(op) {
                return Some((op.to_owned(), n.trim().parse().ok()?));
            }
        }
        rest = &inner[end + 1..];
    }
    None
}

fn holds(op: &str, v: f64, n: f64) -> bool {
    match op {
        "<" => v < n,
        "<=" => v <= n,
        ">" => v > n,
        ">=" => v >= n,
        "=" => v == n,
        _ => v != n,
    }
}

/// Excel's choice of section: with conditions, the first whose condition holds (the second
/// section's default is "any other", the third's too); without, positive;negative;zero.
/// Returns the section and whether it must show a minus sign itself.
fn pick_section(sections: &[String], v: f64) -> Option<(&str, bool)> {
    let numeric: Vec<&String> = sections.iter().take(3).collect();
    if let Some((op, n)) = condition(numeric[0]) {
        if holds(&op, v, n) {
            return Some((numeric[0], false));
        }
        if let Some(second) = numeric.get(1) {
            if let Some((op2, n2)) = condition(second) {
                if holds(&op2, v, n2) {
                    return Some((second, false));
                }
                return numeric.get(2).map(|s| (s.as_str(), true));
            }
            return Some((second, v < 0.0 && numeric.len() < 3));
        }
        return Some((numeric[0], v < 0.0));
    }
    match numeric.len() {
        1 => Some((numeric[0], true)),
        2 => Some(if v < 0.0 { (numeric[1], false) } else { (numeric[0], true) }),
        _ => Some(if v > 0.0 {
            (numeric[0], true)
        } else if v < 0.0 {
            (numeric[1], false)
        } else {
            (numeric[2], true)
        }),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Lit(String),
    Digit(char),
    Point,
    Percent,
    /// `E+` (`true`: always show the sign) or `E-`.
    Exp(bool),
    General,
}

/// The section's tokens, or `None` when it uses something we do not render.
fn tokenize(section: &str) -> Option<Vec<Tok>> {
    let chars: Vec<char> = section.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    let lit = |toks: &mut Vec<Tok>, s: &str| match toks.last_mut() {
        Some(Tok::Lit(l)) => l.push_str(s),
        _ => toks.push(Tok::Lit(s.to_owned())),
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' => {
                let end = chars[i + 1..].iter().position(|&x| x == '"')? + i + 1;
                let s: String = chars[i + 1..end].iter().collect();
                lit(&mut toks, &s);
                i = end + 1;
                continue;
            }
            '\\' => {
                if let Some(&n) = chars.get(i + 1) {
                    lit(&mut toks, &n.to_string());
                }
                i += 2;
                continue;
            }
            // `_x`: a space as wide as x (alignment padding): one space, as Excel's and
            // LibreOffice's CSV exports write it. `*x`: repeat x to fill the column, which a
            // CSV does not have: nothing (LibreOffice writes nothing either).
            '_' => {
                lit(&mut toks, " ");
                i += 2;
                continue;
            }
            '*' => {
                i += 2;
                continue;
            }
            '[' => {
                let end = chars[i + 1..].iter().position(|&x| x == ']')? + i + 1;
                let body: String = chars[i + 1..end].iter().collect();
                if let Some(cur) = body.strip_prefix('$') {
                    // [$€-407]: the currency symbol before the locale id.
                    let sym = cur.split('-').next().unwrap_or("");
                    lit(&mut toks, sym);
                }
                // Colours ([Red], [Color12]) and conditions: nothing to write.
                i = end + 1;
                continue;
            }
            '0' | '#' | '?' => toks.push(Tok::Digit(c)),
            '.' => toks.push(Tok::Point),
            '%' => toks.push(Tok::Percent),
            ',' => toks.push(Tok::Lit(",".into())), // resolved in `render`
            'E' | 'e' if matches!(chars.get(i + 1), Some('+') | Some('-')) => {
                toks.push(Tok::Exp(chars[i + 1] == '+'));
                i += 2;
                continue;
            }
            'G' | 'g' if section[char_offset(section, i)..].to_ascii_lowercase().starts_with("general") => {
                toks.push(Tok::General);
                i += 7;
                continue;
            }
            // Fractions and the text placeholder: not rendered (the value is written).
            '/' | '@' => return None,
            // Date/time letters would make it a date format, which calamine already decoded.
            _ => lit(&mut toks, &c.to_string()),
        }
        i += 1;
    }
    Some(toks)
}

fn char_offset(s: &str, chars: usize) -> usize {
    s.char_indices().nth(chars).map_or(s.len(), |(b, _)| b)
}

/// A decimal number: `digits` (no leading zeros) with `point` digits before the decimal point.
#[derive(Debug, Clone)]
struct Dec {
    digits: Vec<u8>,
    point: i32,
}

impl Dec {
    /// |v| to 15 significant digits, as Excel stores and displays it.
    fn new(v: f64) -> Dec {
        let s = format!("{:.14e}", v.abs());
        let (mant, exp) = s.split_once('e').expect("exponent format");
        let mut digits: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
        while digits.last() == Some(&0) {
            digits.pop();
        }
        let point = exp.parse::<i32>().expect("exponent") + 1;
        if digits.is_empty() {
            return Dec { digits, point: 0 };
        }
        Dec { digits, point }
    }

    fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Rounds half away from zero to `keep` digits counted from the first digit.
    fn round_to(&mut self, keep: i32) {
        if keep < 0 || self.digits.len() as i32 <= keep {
            if keep < 0 {
                self.digits.clear();
            }
            return;
        }
        let keep = keep as usize;
        let up = self.digits[keep] >= 5;
        self.digits.truncate(keep);
        if up {
            let mut i = keep;
            loop {
                if i == 0 {
                    self.digits.insert(0, 1);
                    self.point += 1;
                    break;
                }
                i -= 1;
                if self.digits[i] == 9 {
                    self.digits[i] = 0;
                } else {
                    self.digits[i] += 1;
                    break;
                }
            }
        }
        while self.digits.last() == Some(&0) {
            self.digits.pop();
        }
        if self.digits.is_empty() {
            self.point = 0;
        }
    }

    fn digit(&self, pos: i32) -> u8 {
        // `pos`: 0 = first digit before the point, going right.
        if pos < 0 || pos as usize >= self.digits.len() {
            0
        } else {
            self.digits[pos as usize]
        }
    }
}

fn render(value: f64, toks: &[Tok], signed: bool) -> Option<String> {
    if toks.contains(&Tok::General) {
        let mut out = String::new();
        if signed && value < 0.0 {
            out.push('-');
        }
        for t in toks {
            match t {
                Tok::Lit(s) => out.push_str(s),
                Tok::General => out.push_str(&format_number(value.abs())),
                _ => return None,
            }
        }
        return Some(out);
    }
    // Split the tokens at the exponent; find the point among the mantissa's tokens.
    let exp_at = toks.iter().position(|t| matches!(t, Tok::Exp(_)));
    let (mant, expo) = match exp_at {
        Some(i) => (&toks[..i], Some(&toks[i..])),
        None => (toks, None),
    };
    let point_at = mant.iter().position(|t| *t == Tok::Point);
    let last_digit = mant.iter().rposition(|t| matches!(t, Tok::Digit(_)));
    let Some(last_digit) = last_digit else {
        // No placeholder: the section is literal text (e.g. `"-"` for zero).
        let mut out = String::new();
        for t in toks {
            match t {
                Tok::Lit(s) => out.push_str(s),
                Tok::Percent => out.push('%'),
                _ => return None,
            }
        }
        return Some(out);
    };
    let int_end = point_at.unwrap_or(last_digit + 1);
    // Commas: between integer placeholders = grouping; right after the last integer
    // placeholder (before the point or the end) = scale by 1000 each.
    let mut grouping = false;
    let mut scale = 0i32;
    let mut skip = vec![false; mant.len()];
    for (i, t) in mant.iter().enumerate() {
        if *t != Tok::Lit(",".into()) {
            continue;
        }
        let digit_before = mant[..i].iter().any(|t| matches!(t, Tok::Digit(_)));
        let digit_after = mant[i + 1..int_end.max(i + 1)].iter().any(|t| matches!(t, Tok::Digit(_)));
        let follows_digits =
            mant[..i].iter().rev().find(|t| **t != Tok::Lit(",".into())).is_some_and(|t| matches!(t, Tok::Digit(_)));
        if i < int_end && digit_before && digit_after {
            grouping = true;
            skip[i] = true;
        } else if follows_digits && !mant[i..].iter().any(|t| matches!(t, Tok::Digit(_))) {
            scale += 1;
            skip[i] = true;
        }
    }
    let int_places: Vec<char> =
        mant[..int_end].iter().filter_map(|t| if let Tok::Digit(c) = t { Some(*c) } else { None }).collect();
    let frac_places: Vec<char> =
        mant[int_end..].iter().filter_map(|t| if let Tok::Digit(c) = t { Some(*c) } else { None }).collect();
    let percents = toks.iter().filter(|t| **t == Tok::Percent).count() as i32;

    let mut d = Dec::new(value);
    if !d.is_zero() {
        d.point += 2 * percents - 3 * scale;
    }
    let mut exponent = 0i32;
    if expo.is_some() && !d.is_zero() {
        // Engineering notation (`##0.0E+0`): the exponent is a multiple of the number of
        // integer placeholders; otherwise one integer digit.
        let k = if int_places.len() > 1 && int_places[0] == '#' { int_places.len() as i32 } else { 1 };
        let mut e = d.point - 1;
        e = e.div_euclid(k) * k;
        d.point -= e;
        exponent = e;
        d.round_to(d.point + frac_places.len() as i32);
        if d.point > k {
            // Rounding carried into a new digit (9.99 -> 10.0): renormalise.
            d.point -= k;
            exponent += k;
        }
    } else {
        d.round_to(d.point + frac_places.len() as i32);
    }
    let negative = signed && value < 0.0 && !d.is_zero();

    // Integer digits, most significant first.
    let int_digits: Vec<u8> = (0..d.point.max(0)).map(|p| d.digit(p)).collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    // Integer placeholders are filled from the right; the leftmost takes any extra digits.
    // A digit (or padding zero) `k` places left of the point is followed by a group
    // separator when k is a positive multiple of 3.
    let n_int = int_places.len();
    let len = int_digits.len();
    let group = |text: &mut String, k: usize| {
        if grouping && k > 0 && k.is_multiple_of(3) {
            text.push(',');
        }
    };
    let mut slot_text: Vec<String> = vec![String::new(); n_int];
    for (s, slot) in slot_text.iter_mut().enumerate() {
        let k = n_int - 1 - s;
        if s == 0 && len > k {
            for (idx, dg) in int_digits[..len - k].iter().enumerate() {
                slot.push((b'0' + dg) as char);
                group(slot, len - 1 - idx);
            }
        } else if k < len {
            slot.push((b'0' + int_digits[len - 1 - k]) as char);
            group(slot, k);
        } else {
            match int_places[s] {
                '0' => {
                    slot.push('0');
                    group(slot, k);
                }
                '?' => slot.push(' '),
                _ => {}
            }
        }
    }
    // Fraction digits: `0` shows, trailing `#` zeros drop, trailing `?` zeros become spaces.
    let mut frac: Vec<char> = (0..frac_places.len()).map(|i| (b'0' + d.digit(d.point + i as i32)) as char).collect();
    for i in (0..frac.len()).rev() {
        if frac[i] != '0' {
            break;
        }
        match frac_places[i] {
            '#' => frac[i] = '\0',
            '?' => frac[i] = ' ',
            _ => break,
        }
    }
    let (mut si, mut fi) = (0, 0);
    for (i, t) in mant.iter().enumerate() {
        if skip[i] {
            continue;
        }
        match t {
            Tok::Digit(_) if i < int_end => {
                out.push_str(&slot_text[si]);
                si += 1;
            }
            Tok::Digit(_) => {
                if frac[fi] != '\0' {
                    out.push(frac[fi]);
                }
                fi += 1;
            }
            Tok::Point => out.push('.'),
            Tok::Percent => out.push('%'),
            Tok::Lit(s) => out.push_str(s),
            _ => return None,
        }
    }
    if let Some(expo) = expo {
        let Tok::Exp(plus) = expo[0] else { return None };
        out.push('E');
        if exponent < 0 {
            out.push('-');
        } else if plus {
            out.push('+');
        }
        let places = expo[1..].iter().take_while(|t| matches!(t, Tok::Digit(_))).count();
        out.push_str(&format!("{:0width$}", exponent.unsigned_abs(), width = places.max(1)));
        for t in &expo[1 + places..] {
            match t {
                Tok::Lit(s) => out.push_str(s),
                Tok::Percent => out.push('%'),
                _ => return None,
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::format_number;
    use super::format_with_code as f;

    #[test]
    fn numbers_drop_binary_noise() {
        assert_eq!(format_number(0.1 + 0.2), "0.3");
        assert_eq!(format_number(1.0 / 3.0), "0.333333333333333");
        assert_eq!(format_number(42.0), "42");
        assert_eq!(format_number(-1.5), "-1.5");
        assert_eq!(format_number(1e-7), "0.0000001");
        assert_eq!(format_number(123456789012.0), "123456789012");
    }

    #[test]
    fn decimals_round_half_away_from_zero_on_the_decimal_value() {
        assert_eq!(f(1.5, "0.00").as_deref(), Some("1.50"));
        assert_eq!(f(1051527.3933333, "0.00").as_deref(), Some("1051527.39"));
        assert_eq!(f(1.005, "0.00").as_deref(), Some("1.01"));
        assert_eq!(f(2.5, "0").as_deref(), Some("3"));
        assert_eq!(f(-2.5, "0").as_deref(), Some("-3"));
        assert_eq!(f(0.5, "#.00").as_deref(), Some(".50"));
        assert_eq!(f(12.6183, "0.0000").as_deref(), Some("12.6183"));
        assert_eq!(f(9.999, "0.00").as_deref(), Some("10.00"));
        assert_eq!(f(0.001, "0.00").as_deref(), Some("0.00"));
        assert_eq!(f(1.25, "0.0#").as_deref(), Some("1.25"));
        assert_eq!(f(1.2, "0.0#").as_deref(), Some("1.2"));
        assert_eq!(f(5.0, "000").as_deref(), Some("005"));
    }

    #[test]
    fn grouping_scaling_and_percent() {
        assert_eq!(f(1234567.891, "#,##0.00").as_deref(), Some("1,234,567.89"));
        assert_eq!(f(999.0, "#,##0").as_deref(), Some("999"));
        assert_eq!(f(-1234.0, "#,##0").as_deref(), Some("-1,234"));
        assert_eq!(f(0.0, "#,##0").as_deref(), Some("0"));
        assert_eq!(f(1234567.0, "#,##0,").as_deref(), Some("1,235"));
        assert_eq!(f(1234567.0, "0.0,,").as_deref(), Some("1.2"));
        assert_eq!(f(0.256, "0%").as_deref(), Some("26%"));
        assert_eq!(f(0.12345, "0.00%").as_deref(), Some("12.35%"));
    }

    #[test]
    fn sections_literals_and_currency() {
        let acc = "_($* #,##0.00_);_($* (#,##0.00);_($* \"-\"??_);_(@_)";
        assert_eq!(f(1234.5, acc).as_deref(), Some(" $1,234.50 "));
        assert_eq!(f(-1234.5, acc).as_deref(), Some(" $(1,234.50)"));
        assert_eq!(f(0.0, acc).as_deref(), Some(" $-   "));
        assert_eq!(f(-5.0, "#,##0.00;[Red](#,##0.00)").as_deref(), Some("(5.00)"));
        assert_eq!(f(-5.0, "0.00;[Red]0.00").as_deref(), Some("5.00"));
        assert_eq!(f(3.0, "[$€-407] #,##0.00").as_deref(), Some("€ 3.00"));
        assert_eq!(f(3.0, "0.0 \"kg\"").as_deref(), Some("3.0 kg"));
        assert_eq!(f(3.0, "0\\ \\m").as_deref(), Some("3 m"));
        assert_eq!(f(150.0, "[>100]\"big\";[<=100]0").as_deref(), Some("big"));
        assert_eq!(f(50.0, "[>100]\"big\";[<=100]0").as_deref(), Some("50"));
        assert_eq!(f(-7.0, "\"$\"General").as_deref(), Some("-$7"));
    }

    #[test]
    fn scientific() {
        assert_eq!(f(12345.0, "0.00E+00").as_deref(), Some("1.23E+04"));
        assert_eq!(f(0.000123, "0.00E+00").as_deref(), Some("1.23E-04"));
        assert_eq!(f(-12345.0, "0.0E+0").as_deref(), Some("-1.2E+4"));
        assert_eq!(f(99999.0, "0.00E+00").as_deref(), Some("1.00E+05"));
        assert_eq!(f(12345.0, "##0.0E+0").as_deref(), Some("12.3E+3"));
        assert_eq!(f(0.0, "0.00E+00").as_deref(), Some("0.00E+00"));
    }

    #[test]
    fn general_and_unsupported_formats_give_none() {
        assert_eq!(f(1.5, "General"), None);
        assert_eq!(f(1.5, ""), None);
        assert_eq!(f(1.5, "@"), None);
        assert_eq!(f(1.5, "0/x"), None);
    }
}

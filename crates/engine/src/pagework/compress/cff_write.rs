//! Writing a bare CFF font program (a PDF `/FontFile3 /Subtype /Type1C`) from a Type 1
//! font: the glyphs kept, their Type 2 charstrings, the built-in encoding (so that
//! glyph selection by the PDF's `/Encoding` or by code works as before) and the hints.
//!
//! Layout (Adobe TN 5176): header, Name INDEX, Top DICT INDEX, String INDEX, an empty
//! Global Subr INDEX, charset, encoding, CharStrings INDEX, Private DICT. Offsets in the
//! Top DICT are written in the 5-byte form, so the layout is computed in one pass.
//! Without `/FontInfo`, `/UniqueID` and `/XUID`: no PDF reader needs them.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::cff_std::{STANDARD_ENCODING, STANDARD_STRINGS};
use super::t1_outline::{outline, Op, Outline};
use super::t2_write::charstring;
use super::type1::Type1Font;

fn standard_sids() -> &'static HashMap<&'static str, u16> {
    static MAP: OnceLock<HashMap<&'static str, u16>> = OnceLock::new();
    MAP.get_or_init(|| STANDARD_STRINGS.split(' ').enumerate().map(|(i, s)| (s, i as u16)).collect())
}

/// The glyph name StandardEncoding gives `code`.
pub(crate) fn standard_name(code: u8) -> Option<&'static str> {
    match STANDARD_ENCODING[code as usize] {
        0 => None,
        sid => STANDARD_STRINGS.split(' ').nth(sid as usize),
    }
}

fn index(items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = (items.len() as u16).to_be_bytes().to_vec();
    if items.is_empty() {
        return out;
    }
    let total: usize = items.iter().map(Vec::len).sum::<usize>() + 1;
    let off_size = (1..=4).find(|&n| n == 4 || total < 1 << (8 * n)).unwrap_or(4);
    out.push(off_size as u8);
    let mut off = 1usize;
    out.extend_from_slice(&(off as u32).to_be_bytes()[4 - off_size..]);
    for item in items {
        off += item.len();
        out.extend_from_slice(&(off as u32).to_be_bytes()[4 - off_size..]);
    }
    for item in items {
        out.extend_from_slice(item);
    }
    out
}

/// Appends a DICT number (integer forms, or the nibble-coded real).
fn dict_number(out: &mut Vec<u8>, v: f64) {
    if v.fract() == 0.0 && v.abs() < 2e9 {
        let i = v as i32;
        match i {
            -107..=107 => out.push((i + 139) as u8),
            108..=1131 => out.extend([((i - 108) / 256 + 247) as u8, ((i - 108) % 256) as u8]),
            -1131..=-108 => out.extend([((-i - 108) / 256 + 251) as u8, ((-i - 108) % 256) as u8]),
            -32768..=32767 => {
                out.push(28);
                out.extend((i as i16).to_be_bytes());
            }
            _ => {
                out.push(29);
                out.extend(i.to_be_bytes());
            }
        }
        return;
    }
    let text = format!("{v}");
    let mut nibbles: Vec<u8> = Vec::new();
    for c in text.bytes() {
        nibbles.push(match c {
            b'0'..=b'9' => c - b'0',
            b'.' => 0xa,
            b'-' => 0xe,
            _ => 0xf,
        });
    }
    nibbles.push(0xf);
    if nibbles.len() % 2 == 1 {
        nibbles.push(0xf);
    }
    out.push(30);
    out.extend(nibbles.chunks(2).map(|p| (p[0] << 4) | p[1]));
}

fn offset(out: &mut Vec<u8>, v: usize) {
    out.push(29);
    out.extend((v as i32).to_be_bytes());
}

/// Private DICT operators of the Type 1 keys (two bytes: escaped).
fn private_op(key: &str) -> Option<(&'static [u8], bool)> {
    // (operator, delta-encoded array)
    Some(match key {
        "BlueValues" => (&[6], true),
        "OtherBlues" => (&[7], true),
        "FamilyBlues" => (&[8], true),
        "FamilyOtherBlues" => (&[9], true),
        "StdHW" => (&[10], false),
        "StdVW" => (&[11], false),
        "BlueScale" => (&[12, 9], false),
        "BlueShift" => (&[12, 10], false),
        "BlueFuzz" => (&[12, 11], false),
        "StemSnapH" => (&[12, 12], true),
        "StemSnapV" => (&[12, 13], true),
        "ForceBold" => (&[12, 14], false),
        "LanguageGroup" => (&[12, 17], false),
        _ => return None,
    })
}

/// True when every coordinate of `o` is small enough for its deltas to fit Type 2's
/// 16.16 numbers (a font outside that is kept as Type 1).
fn in_range(o: &Outline) -> bool {
    let ok = |v: f64| v.abs() <= 16000.0;
    ok(o.width)
        && o.seac.is_none_or(|(x, y, _, _)| ok(x) && ok(y))
        && o.ops.iter().all(|op| match op {
            Op::Move(x, y) | Op::Line(x, y) => ok(*x) && ok(*y),
            Op::Curve(c) => c.iter().all(|v| ok(*v)),
            Op::Stem { pos, width, .. } => ok(*pos) && ok(*width),
            Op::Replace => true,
        })
}

/// The CFF program with the glyphs named in `keep` (plus `.notdef` and the components
/// of kept accented composites); `None` when a kept charstring cannot be converted.
pub(crate) fn write_cff(font: &Type1Font, keep: Option<&[String]>) -> Option<Vec<u8>> {
    let by_name: HashMap<&str, &[u8]> = font.charstrings.iter().map(|(n, c)| (n.as_str(), c.as_slice())).collect();
    let mut wanted: Vec<&str> = vec![".notdef"];
    match keep {
        Some(names) => wanted.extend(names.iter().map(String::as_str).filter(|n| by_name.contains_key(n))),
        None => wanted.extend(font.charstrings.iter().map(|(n, _)| n.as_str())),
    }
    let mut outlines = HashMap::new();
    let mut k = 0;
    while k < wanted.len() {
        let name = wanted[k];
        k += 1;
        if outlines.contains_key(name) {
            continue;
        }
        let o = outline(by_name.get(name)?, &font.subrs)?;
        if !in_range(&o) {
            return None;
        }
        if let Some((_, _, b, a)) = o.seac {
            for code in [b, a] {
                let comp = standard_name(code)?;
                by_name.get(comp)?;
                wanted.push(comp);
            }
        }
        outlines.insert(name, o);
    }
    // Glyph order: .notdef, the encoded glyphs by code, then the rest.
    let codes: Vec<(u8, &str)> = match &font.encoding {
        Some(enc) => {
            enc.iter().filter(|(_, n)| outlines.contains_key(n.as_str())).map(|(c, n)| (*c, n.as_str())).collect()
        }
        None => Vec::new(),
    };
    let mut order: Vec<&str> = vec![".notdef"];
    for (_, n) in &codes {
        if !order.contains(n) {
            order.push(n);
        }
    }
    let mut rest: Vec<&str> = outlines.keys().copied().filter(|n| !order.contains(n)).collect();
    rest.sort_unstable();
    order.extend(rest);

    // The most common width is the default; the nominal width the same.
    let mut counts: HashMap<i64, usize> = HashMap::new();
    for o in outlines.values() {
        *counts.entry((o.width * 65536.0) as i64).or_default() += 1;
    }
    let default_w = counts.iter().max_by_key(|(w, c)| (**c, -**w)).map_or(0.0, |(w, _)| *w as f64 / 65536.0);
    let charstrings: Vec<Vec<u8>> = order.iter().map(|n| charstring(&outlines[n], default_w, default_w)).collect();

    // Strings: names outside the standard set, and the font name.
    let std = standard_sids();
    let mut strings: Vec<Vec<u8>> = Vec::new();
    let mut sid = |name: &str| -> u16 {
        if let Some(&s) = std.get(name) {
            return s;
        }
        if let Some(p) = strings.iter().position(|s| s == name.as_bytes()) {
            return 391 + p as u16;
        }
        strings.push(name.as_bytes().to_vec());
        390 + strings.len() as u16
    };
    let mut charset = vec![0u8];
    for n in &order[1..] {
        charset.extend(sid(n).to_be_bytes());
    }
    let encoding = font.encoding.as_ref().map(|_| {
        let mut first_code: Vec<(u8, &str)> = Vec::new();
        let mut sups: Vec<(u8, u16)> = Vec::new();
        for &(c, n) in &codes {
            if first_code.iter().any(|(_, m)| *m == n) {
                sups.push((c, sid(n)));
            } else {
                first_code.push((c, n));
            }
        }
        if first_code.len() > 255 || sups.len() > 255 {
            return Vec::new();
        }
        let mut e = vec![if sups.is_empty() { 0 } else { 0x80 }, first_code.len() as u8];
        e.extend(first_code.iter().map(|(c, _)| *c));
        if !sups.is_empty() {
            e.push(sups.len() as u8);
            for (c, s) in sups {
                e.push(c);
                e.extend(s.to_be_bytes());
            }
        }
        e
    });
    if strings.len() > 60000 || order.len() > 65000 || encoding.as_ref().is_some_and(Vec::is_empty) {
        return None;
    }

    let mut private = Vec::new();
    for (key, vals) in &font.private {
        let Some((op, delta)) = private_op(key) else { continue };
        if vals.is_empty() || (!delta && vals.len() != 1) {
            continue;
        }
        let mut prev = 0.0;
        for &v in vals {
            dict_number(&mut private, if delta { v - prev } else { v });
            prev = v;
        }
        private.extend_from_slice(op);
    }
    if default_w != 0.0 {
        dict_number(&mut private, default_w);
        private.push(20);
        dict_number(&mut private, default_w);
        private.push(21);
    }

    let name_index = index(&[font.name.as_bytes().to_vec()]);
    let string_index = index(&strings);
    let gsubr_index = index(&[]);
    let cs_index = index(&charstrings);
    // Top DICT with fixed-size offsets: its size does not depend on their values.
    let top = |charset_at: usize, enc_at: usize, cs_at: usize, priv_at: usize| {
        let mut t = Vec::new();
        for &v in &font.font_bbox {
            dict_number(&mut t, v);
        }
        t.push(5);
        if let Some(m) = &font.font_matrix {
            for &v in m {
                dict_number(&mut t, v);
            }
            t.extend([12, 7]);
        }
        offset(&mut t, charset_at);
        t.push(15);
        if encoding.is_some() {
            offset(&mut t, enc_at);
            t.push(16);
        }
        offset(&mut t, cs_at);
        t.push(17);
        offset(&mut t, private.len());
        offset(&mut t, priv_at);
        t.push(18);
        t
    };
    let top_len = index(&[top(0, 0, 0, 0)]).len();
    let charset_at = 4 + name_index.len() + top_len + string_index.len() + gsubr_index.len();
    let enc_at = charset_at + charset.len();
    let cs_at = enc_at + encoding.as_ref().map_or(0, Vec::len);
    let priv_at = cs_at + cs_index.len();
    let mut out = vec![1, 0, 4, 4];
    out.extend(name_index);
    out.extend(index(&[top(charset_at, enc_at, cs_at, priv_at)]));
    out.extend(string_index);
    out.extend(gsubr_index);
    out.extend(charset);
    out.extend(encoding.unwrap_or_default());
    out.extend(cs_index);
    out.extend(private);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_offsets_start_at_one() {
        assert_eq!(index(&[b"ab".to_vec(), b"c".to_vec()]), vec![0, 2, 1, 1, 3, 4, b'a', b'b', b'c']);
        assert_eq!(index(&[]), vec![0, 0]);
    }

    #[test]
    fn dict_reals_are_nibble_coded() {
        let mut o = Vec::new();
        dict_number(&mut o, -0.5);
        assert_eq!(o, vec![30, 0xe0, 0xa5, 0xff]);
        assert_eq!(standard_name(65), Some("A"));
    }
}

//! Reading an embedded Type 1 font program (a PDF `/FontFile`: cleartext part, then the
//! eexec-encrypted private part) into its font-wide values, hints and charstrings.
//!
//! Only what a CFF copy needs is read: the font's name, matrix, bounding box and
//! built-in encoding, the Private dictionary's hint values, and the subroutines and
//! charstrings decrypted. Anything unexpected (a PaintType 2 font, a missing charstring
//! dictionary, binary data running past the end) gives `None`, and the caller keeps the
//! font as it is. The charstrings are interpreted by `t1_outline.rs`.

/// A parsed Type 1 font.
#[derive(Debug, Clone)]
pub(crate) struct Type1Font {
    pub name: String,
    /// `None` when it is the default `[0.001 0 0 0.001 0 0]`.
    pub font_matrix: Option<Vec<f64>>,
    pub font_bbox: Vec<f64>,
    /// The built-in encoding, code -> glyph name; `None` for StandardEncoding.
    pub encoding: Option<Vec<(u8, String)>>,
    /// Private dictionary hint values by key (booleans as 0/1).
    pub private: Vec<(String, Vec<f64>)>,
    /// Subroutines, decrypted (empty where the font has none).
    pub subrs: Vec<Vec<u8>>,
    /// Charstrings by glyph name, decrypted, in the font's order.
    pub charstrings: Vec<(String, Vec<u8>)>,
}

/// Private dictionary entries that CFF carries over.
pub(crate) const PRIVATE_KEYS: [&str; 13] = [
    "BlueValues",
    "OtherBlues",
    "FamilyBlues",
    "FamilyOtherBlues",
    "BlueScale",
    "BlueShift",
    "BlueFuzz",
    "StdHW",
    "StdVW",
    "StemSnapH",
    "StemSnapV",
    "ForceBold",
    "LanguageGroup",
];

#[derive(Debug, Clone, PartialEq)]
enum Tok<'a> {
    Name(&'a [u8]),
    Num(f64),
    Word(&'a [u8]),
    Open,
    Close,
    /// A charstring or subroutine's bytes (after `n RD `).
    Bin(&'a [u8]),
}

struct Lexer<'a> {
    s: &'a [u8],
    i: usize,
    last_num: Option<usize>,
}

fn is_delim(b: u8) -> bool {
    b.is_ascii_whitespace() || b"/[]{}()<>%".contains(&b)
}

impl<'a> Lexer<'a> {
    fn new(s: &'a [u8]) -> Self {
        Lexer { s, i: 0, last_num: None }
    }

    /// The next token; `None` at the end (or on binary data cut short).
    fn next(&mut self) -> Option<Tok<'a>> {
        let s = self.s;
        loop {
            while self.i < s.len() && s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
            if s.get(self.i) == Some(&b'%') {
                while self.i < s.len() && s[self.i] != b'\n' && s[self.i] != b'\r' {
                    self.i += 1;
                }
                continue;
            }
            break;
        }
        let b = *s.get(self.i)?;
        let start = self.i;
        self.i += 1;
        let tok = match b {
            b'[' | b'{' => Tok::Open,
            b']' | b'}' => Tok::Close,
            b'(' => {
                let mut depth = 1;
                while depth > 0 {
                    match *s.get(self.i)? {
                        b'\\' => self.i += 1,
                        b'(' => depth += 1,
                        b')' => depth -= 1,
                        _ => {}
                    }
                    self.i += 1;
                }
                Tok::Word(&s[start..self.i])
            }
            b'<' | b'>' => Tok::Word(&s[start..self.i]),
            b'/' => {
                while self.i < s.len() && !is_delim(s[self.i]) {
                    self.i += 1;
                }
                Tok::Name(&s[start + 1..self.i])
            }
            _ => {
                while self.i < s.len() && !is_delim(s[self.i]) {
                    self.i += 1;
                }
                let w = &s[start..self.i];
                match std::str::from_utf8(w).ok().and_then(|t| t.parse::<f64>().ok()) {
                    Some(n) => Tok::Num(n),
                    None => Tok::Word(w),
                }
            }
        };
        // `n RD <n bytes>`: the binary data follows one space after RD (or `-|`).
        if let Tok::Word(w) = tok {
            if (w == b"RD" || w == b"-|") && self.last_num.is_some() {
                let n = self.last_num.take()?;
                let from = self.i + 1;
                let data = s.get(from..from + n)?;
                self.i = from + n;
                return Some(Tok::Bin(data));
            }
        }
        self.last_num = match tok {
            Tok::Num(n) if n >= 0.0 && n.fract() == 0.0 => Some(n as usize),
            _ => None,
        };
        Some(tok)
    }
}

fn eexec_decrypt(data: &[u8], mut r: u16, skip: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    for &c in data {
        out.push(c ^ (r >> 8) as u8);
        r = (c as u16).wrapping_add(r).wrapping_mul(52845).wrapping_add(22719);
    }
    out.split_off(skip.min(out.len()))
}

/// Decrypts a charstring (`lenIV` < 0: stored in clear).
pub(crate) fn charstring_decrypt(data: &[u8], len_iv: i32) -> Vec<u8> {
    if len_iv < 0 {
        data.to_vec()
    } else {
        eexec_decrypt(data, 4330, len_iv as usize)
    }
}

fn hex_value(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// The encrypted part as binary (it may be stored in hexadecimal).
fn binary_part(enc: &[u8]) -> Vec<u8> {
    if enc.len() >= 4 && enc[..4].iter().all(|&b| hex_value(b).is_some()) {
        let digits: Vec<u8> = enc.iter().filter_map(|&b| hex_value(b)).collect();
        digits.chunks(2).map(|p| (p[0] << 4) | p.get(1).copied().unwrap_or(0)).collect()
    } else {
        enc.to_vec()
    }
}

fn numbers(lx: &mut Lexer<'_>) -> Option<Vec<f64>> {
    match lx.next()? {
        Tok::Num(n) => Some(vec![n]),
        Tok::Word(b"true") => Some(vec![1.0]),
        Tok::Word(b"false") => Some(vec![0.0]),
        Tok::Open => {
            let mut v = Vec::new();
            loop {
                match lx.next()? {
                    Tok::Num(n) => v.push(n),
                    Tok::Close => return Some(v),
                    _ => return None,
                }
            }
        }
        _ => None,
    }
}

/// Parses the program of a `/FontFile` stream (decoded); `len1` and `len2` are the
/// stream's `/Length1` and `/Length2` (0 when absent).
pub(crate) fn parse(data: &[u8], len1: usize, len2: usize) -> Option<Type1Font> {
    let eexec = data.windows(5).position(|w| w == b"eexec")?;
    let clear = &data[..eexec];
    let mut start = eexec + 5;
    if len1 > eexec && len1 <= eexec + 8 && len1 < data.len() {
        start = len1;
    } else {
        while start < data.len() && matches!(data[start], b'\r' | b'\n' | b'\t' | b' ') {
            start += 1;
        }
    }
    let end = if len2 > 0 && start + len2 <= data.len() { start + len2 } else { data.len() };
    let private = eexec_decrypt(&binary_part(&data[start..end]), 55665, 4);

    let mut font = Type1Font {
        name: String::new(),
        font_matrix: None,
        font_bbox: vec![0.0; 4],
        encoding: None,
        private: Vec::new(),
        subrs: Vec::new(),
        charstrings: Vec::new(),
    };
    let mut lx = Lexer::new(clear);
    while let Some(t) = lx.next() {
        match t {
            Tok::Name(b"FontName") => {
                if let Some(Tok::Name(n)) = lx.next() {
                    font.name = String::from_utf8_lossy(n).into_owned();
                }
            }
            // A stroked font (PaintType 2) has no CFF equivalent here.
            Tok::Name(b"PaintType") if numbers(&mut lx)? != [0.0] => return None,
            Tok::Name(b"FontMatrix") => {
                let m = numbers(&mut lx)?;
                if m.len() != 6 {
                    return None;
                }
                if m != [0.001, 0.0, 0.0, 0.001, 0.0, 0.0] {
                    font.font_matrix = Some(m);
                }
            }
            Tok::Name(b"FontBBox") => {
                font.font_bbox = numbers(&mut lx)?;
                if font.font_bbox.len() != 4 {
                    return None;
                }
            }
            Tok::Name(b"Encoding") => font.encoding = encoding(&mut lx)?,
            _ => {}
        }
    }

    let mut len_iv = 4i32;
    let mut raw_subrs: Vec<(usize, &[u8])> = Vec::new();
    let mut raw_glyphs: Vec<(&[u8], &[u8])> = Vec::new();
    let mut lx = Lexer::new(&private);
    // `dup i n RD <bin>` is a subroutine, `/name n RD <bin>` a charstring.
    let mut hist: Vec<Tok<'_>> = Vec::new();
    while let Some(t) = lx.next() {
        match &t {
            Tok::Bin(bin) => match hist.as_slice() {
                [.., Tok::Word(b"dup"), Tok::Num(i), Tok::Num(_)] => raw_subrs.push((*i as usize, bin)),
                [.., Tok::Name(name), Tok::Num(_)] => raw_glyphs.push((name, bin)),
                _ => return None,
            },
            Tok::Name(b"lenIV") => len_iv = *numbers(&mut lx)?.first()? as i32,
            Tok::Name(key) if PRIVATE_KEYS.iter().any(|k| k.as_bytes() == *key) => {
                let key = String::from_utf8_lossy(key).into_owned();
                if let Some(v) = numbers(&mut lx) {
                    if !font.private.iter().any(|(k, _)| *k == key) {
                        font.private.push((key, v));
                    }
                }
                hist.clear();
                continue;
            }
            _ => {}
        }
        hist.push(t);
        if hist.len() > 3 {
            hist.remove(0);
        }
    }
    if raw_glyphs.is_empty() || font.name.is_empty() {
        return None;
    }
    let nsubrs = raw_subrs.iter().map(|s| s.0 + 1).max().unwrap_or(0);
    if nsubrs > 65536 {
        return None;
    }
    font.subrs = vec![Vec::new(); nsubrs];
    for (i, s) in raw_subrs {
        font.subrs[i] = charstring_decrypt(s, len_iv);
    }
    for (name, cs) in raw_glyphs {
        let name = String::from_utf8_lossy(name).into_owned();
        if !font.charstrings.iter().any(|(n, _)| *n == name) {
            font.charstrings.push((name, charstring_decrypt(cs, len_iv)));
        }
    }
    Some(font)
}

/// The value of `/Encoding`: `None` for StandardEncoding, else the `dup code /name put`
/// entries up to `readonly def` / `def`. The outer `None` is a form this does not read.
#[allow(clippy::option_option)]
fn encoding(lx: &mut Lexer<'_>) -> Option<Option<Vec<(u8, String)>>> {
    let mut entries = Vec::new();
    let mut hist: Vec<Tok<'_>> = Vec::new();
    loop {
        let t = lx.next()?;
        match t {
            Tok::Word(b"StandardEncoding") if hist.is_empty() => return Some(None),
            Tok::Word(b"def") => break,
            Tok::Word(b"put") => {
                if let [.., Tok::Word(b"dup"), Tok::Num(c), Tok::Name(n)] = hist.as_slice() {
                    if (0.0..256.0).contains(c) {
                        entries.push((*c as u8, String::from_utf8_lossy(n).into_owned()));
                    }
                }
            }
            _ => {}
        }
        hist.push(t);
        if hist.len() > 4 {
            hist.remove(0);
        }
    }
    // A later entry for a code replaces an earlier one.
    entries.reverse();
    let mut seen = [false; 256];
    entries.retain(|(c, _)| !std::mem::replace(&mut seen[*c as usize], true));
    entries.sort_by_key(|e| e.0);
    Some(Some(entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eexec_round_trip_of_a_known_value() {
        // Encrypting then decrypting with the same key gives the plain text back.
        let plain = b"abcd/Private 8 dict";
        let mut r: u16 = 55665;
        let enc: Vec<u8> = plain
            .iter()
            .map(|&p| {
                let c = p ^ (r >> 8) as u8;
                r = (c as u16).wrapping_add(r).wrapping_mul(52845).wrapping_add(22719);
                c
            })
            .collect();
        assert_eq!(eexec_decrypt(&enc, 55665, 4), b"/Private 8 dict");
    }

    #[test]
    fn the_lexer_reads_binary_data_after_rd() {
        let mut lx = Lexer::new(b"/a 3 RD x y ND dup 2 2 -| ab NP");
        assert_eq!(lx.next(), Some(Tok::Name(b"a")));
        assert_eq!(lx.next(), Some(Tok::Num(3.0)));
        assert_eq!(lx.next(), Some(Tok::Bin(b"x y")));
        assert_eq!(lx.next(), Some(Tok::Word(b"ND")));
        assert_eq!(lx.next(), Some(Tok::Word(b"dup")));
        assert_eq!(lx.next(), Some(Tok::Num(2.0)));
        assert_eq!(lx.next(), Some(Tok::Num(2.0)));
        assert_eq!(lx.next(), Some(Tok::Bin(b"ab")));
    }
}

//! ToUnicode CMaps of simple fonts cut to the codes the pages show: pdfTeX writes one
//! for all 256 codes of an encoding (about 750 deflated bytes a font), of which a
//! document uses a few dozen.
//!
//! Only one-byte CMaps (`<00> <FF>` code space, `bfchar`/`bfrange` entries) are read;
//! anything else gives `None` and the CMap is kept. The text a reader extracts for a
//! code shown is the same before and after.

use crate::pdf::lexer::{Kind, Lexer, Token};

/// Hex string `<...>` bytes.
fn hex(tok: &[u8]) -> Option<Vec<u8>> {
    let inner = tok.strip_prefix(b"<")?.strip_suffix(b">")?;
    let digits: Vec<u8> = inner
        .iter()
        .filter(|b| !b.is_ascii_whitespace())
        .map(|&b| (b as char).to_digit(16).map(|d| d as u8))
        .collect::<Option<_>>()?;
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    Some(digits.chunks(2).map(|p| (p[0] << 4) | p[1]).collect())
}

/// The CMap's tokens as their source bytes, comments skipped; `None` on a syntax error.
fn tokens(s: &[u8]) -> Option<Vec<&[u8]>> {
    Lexer::new(s)
        .filter(|t| !matches!(t, Ok(Token { kind: Kind::Comment, .. })))
        .map(|t| t.ok().map(|t| t.text))
        .collect()
}

/// The code -> Unicode (UTF-16BE bytes) map of a one-byte CMap.
fn mappings(cmap: &[u8]) -> Option<Vec<Option<Vec<u8>>>> {
    let toks = tokens(cmap)?;
    let mut map: Vec<Option<Vec<u8>>> = vec![None; 256];
    let mut i = 0;
    let one_byte = |t: &[u8]| -> Option<usize> {
        let v = hex(t)?;
        (v.len() == 1).then_some(v[0] as usize)
    };
    while i < toks.len() {
        match toks[i] {
            b"begincodespacerange" => {
                i += 1;
                while *toks.get(i)? != b"endcodespacerange" {
                    one_byte(toks[i])?;
                    one_byte(toks.get(i + 1)?)?;
                    i += 2;
                }
            }
            b"beginbfchar" => {
                i += 1;
                while *toks.get(i)? != b"endbfchar" {
                    let c = one_byte(toks[i])?;
                    map[c] = Some(hex(toks.get(i + 1)?)?);
                    i += 2;
                }
            }
            b"beginbfrange" => {
                i += 1;
                while *toks.get(i)? != b"endbfrange" {
                    let (lo, hi) = (one_byte(toks[i])?, one_byte(toks.get(i + 1)?)?);
                    if hi < lo {
                        return None;
                    }
                    if *toks.get(i + 2)? == b"[" {
                        let mut k = i + 3;
                        for slot in map.iter_mut().take(hi + 1).skip(lo) {
                            *slot = Some(hex(toks.get(k)?)?);
                            k += 1;
                        }
                        if *toks.get(k)? != b"]" {
                            return None;
                        }
                        i = k + 1;
                    } else {
                        let base = hex(toks[i + 2])?;
                        for (off, c) in (lo..=hi).enumerate() {
                            // The last byte of the destination is incremented.
                            let mut d = base.clone();
                            let last = d.last_mut()?;
                            *last = last.checked_add(off as u8)?;
                            map[c] = Some(d);
                        }
                        i += 3;
                    }
                }
            }
            b"begincidrange" | b"begincidchar" | b"usecmap" => return None,
            _ => {}
        }
        i += 1;
    }
    Some(map)
}

fn hex_string(bytes: &[u8]) -> String {
    let mut s = String::from("<");
    for b in bytes {
        s.push_str(&format!("{b:02X}"));
    }
    s.push('>');
    s
}

/// The CMap `cmap` with only the codes in `used` (a 256-entry set); `None` when it is not a
/// one-byte CMap this reads, or when the result would not be smaller.
pub(crate) fn cut(cmap: &[u8], used: &[bool; 256]) -> Option<Vec<u8>> {
    let map = mappings(cmap)?;
    let kept: Vec<(usize, &Vec<u8>)> =
        map.iter().enumerate().filter_map(|(c, m)| Some((c, m.as_ref()?))).filter(|(c, _)| used[*c]).collect();
    let mut out = String::from(
        "/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo <</Registry (Adobe) \
         /Ordering (UCS) /Supplement 0>> def\n/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n\
         1 begincodespacerange\n<00> <FF>\nendcodespacerange\n",
    );
    for chunk in kept.chunks(100) {
        out.push_str(&format!("{} beginbfchar\n", chunk.len()));
        for (c, d) in chunk {
            out.push_str(&format!("<{c:02X}> {}\n", hex_string(d)));
        }
        out.push_str("endbfchar\n");
    }
    out.push_str("endcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n");
    (out.len() < cmap.len()).then(|| out.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_not_shown_are_dropped_and_the_rest_map_as_before() {
        let cmap = b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n\
            1 begincodespacerange <00> <FF> endcodespacerange\n\
            2 beginbfrange <61> <7A> <0061> <0B> <0C> [<00660066> <00660069>] endbfrange\n\
            1 beginbfchar <21> <0021> endbfchar endcmap end end";
        // pdfTeX-like: every code mapped (here 0x80-0xFF one by one).
        let mut cmap = cmap.to_vec();
        cmap.extend(b"128 beginbfchar\n");
        for c in 0x80..=0xFF {
            cmap.extend(format!("<{c:02X}> <00{c:02X}>\n").as_bytes());
        }
        cmap.extend(b"endbfchar\n");
        let mut used = [false; 256];
        used[0x63] = true;
        used[0x0C] = true;
        used[0x81] = true;
        let before = mappings(&cmap).unwrap();
        assert_eq!(before.iter().filter(|m| m.is_some()).count(), 26 + 2 + 1 + 128);
        let out = mappings(&cut(&cmap, &used).unwrap()).unwrap();
        assert_eq!(out[0x81], Some(vec![0, 0x81]));
        assert_eq!(out[0x63], Some(vec![0, 0x63]));
        assert_eq!(out[0x0C], Some(vec![0, 0x66, 0, 0x69]));
        assert_eq!(out.iter().filter(|m| m.is_some()).count(), 3);
    }

    #[test]
    fn a_two_byte_cmap_is_not_read() {
        let cmap = b"1 begincodespacerange <0000> <FFFF> endcodespacerange 1 beginbfchar <0001> <0041> endbfchar";
        assert!(mappings(cmap).is_none());
    }
}

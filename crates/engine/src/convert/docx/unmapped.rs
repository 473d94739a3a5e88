//! Text whose character codes do not give its letters: glyphs without a usable Unicode mapping
//! (MuPDF's U+FFFD for an unmapped glyph, a font's private-use or control codes) and fonts whose
//! encoding names other characters than the glyphs draw (a custom encoding without `ToUnicode`:
//! `pdftotext` prints symbols where the page shows words). Copying such text gives nonsense, so
//! the lines that look like it are read again by OCR from the rendered page, and a line takes
//! the recognised words where they differ from its text layer; a line whose text layer agrees
//! with what is drawn (a formula, a row of figures) keeps its own text.

use super::items::{Item, Line, Run};
use crate::ocr::pipeline::PageJson;

/// A line's glyphs above which a line that looks unmapped makes its page worth an OCR check:
/// a few bullets or a symbol here and there never do.
const PAGE_SUSPECT_GLYPHS: usize = 16;
/// Share of a line's glyphs without a usable mapping from which the line is suspect.
const UNMAPPED_SHARE: f32 = 0.3;
/// Share of letters, digits and other characters under which a line of ASCII symbols is suspect.
const ALNUM_SHARE: f32 = 0.5;
/// Similarity (1 - normalised edit distance) under which the recognised words replace a
/// suspect line.
const SAME_TEXT: f64 = 0.5;
/// Similarity under which they replace any other line of a checked page, when OCR is sure.
const STRANGER_TEXT: f64 = 0.3;
/// Mean word confidence of the recognised words from which OCR is sure.
const SURE: f32 = 0.9;

/// A character that cannot be the text of its glyph: the replacement character, a private-use
/// code point (a font's own codes) or a control character.
pub(super) fn unusable(c: char) -> bool {
    c == '\u{FFFD}'
        || ('\u{E000}'..='\u{F8FF}').contains(&c)
        || c >= '\u{F0000}'
        || (c.is_control() && !c.is_whitespace())
}

/// Leaders and rules (`.....`, `-----`, `____`) are symbols in good text too.
fn leader(c: char) -> bool {
    matches!(c, '.' | '-' | '_' | '·' | '…' | '—' | '–' | '=' | '*')
}

fn text_of(line: &Line) -> String {
    line.runs.iter().map(|r| r.text.as_str()).collect()
}

/// The glyphs of a line whose text layer may not be what it shows, or 0: one with a large share
/// of glyphs without a usable mapping, one of mostly ASCII symbols, or one whose Latin words
/// are mostly [`unspellable`].
fn suspect_glyphs(line: &Line) -> usize {
    let text = text_of(line);
    let mapped: Vec<char> = text.chars().filter(|c| !c.is_whitespace() && !leader(*c)).collect();
    let unmapped = line.unmapped_glyphs as usize;
    let glyphs = mapped.len() + unmapped;
    if glyphs < 2 {
        return 0;
    }
    if unmapped as f32 >= UNMAPPED_SHARE * glyphs as f32 {
        return glyphs;
    }
    // ASCII and Latin-1 punctuation and symbols: where standard glyph names (`/exclam`,
    // `/numbersign`) of a custom encoding land. Mathematical symbols, arrows and Greek (a
    // formula's true text) are not counted.
    let ascii_symbols =
        mapped.iter().filter(|&&c| c.is_ascii_punctuation() || ('\u{A1}'..='\u{BF}').contains(&c)).count();
    if mapped.len() >= 4 && ascii_symbols as f32 > (1.0 - ALNUM_SHARE) * mapped.len() as f32 {
        return glyphs;
    }
    // Letters mapped to other letters (an encoding shifted against the font's glyphs:
    // `9HQXDXFLQpPDSD` for "Venu au cinéma") make words no language spells.
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.chars().count() >= 4).collect();
    let odd = words.iter().filter(|w| unspellable(w)).count();
    if words.len() >= 2 && odd * 2 >= words.len() {
        return glyphs;
    }
    0
}

/// A Latin-script word no language spells: letters without a vowel; a long word mostly in
/// capitals with a switch from lower to upper case inside (`LQpPDSD`, where `iPhone` and
/// `McDonald` are mostly lower case); letters and digits alternating twice (`0DQRHOGH2OLY`).
/// Words in other scripts are never judged.
fn unspellable(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    let latin = |c: char| c.is_ascii_alphabetic() || ('\u{C0}'..='\u{24F}').contains(&c);
    if !chars.iter().all(|&c| latin(c) || c.is_ascii_digit()) {
        return false;
    }
    let letters = chars.iter().filter(|c| !c.is_ascii_digit()).count();
    let vowel = |c: &char| {
        let base = c.to_lowercase().next().unwrap_or(*c);
        "aeiouyàáâãäåæèéêëìíîïòóôõöøœùúûüýÿąęėįųůőű".contains(base)
    };
    let pairs = || chars.iter().zip(chars.iter().skip(1));
    let switches = pairs().filter(|(a, b)| a.is_lowercase() && b.is_uppercase()).count();
    let upper = chars.iter().filter(|c| c.is_uppercase()).count();
    let alternations = pairs().filter(|(a, b)| a.is_ascii_digit() != b.is_ascii_digit()).count();
    (letters == chars.len() && !chars.iter().any(vowel))
        || (chars.len() >= 6 && switches >= 1 && upper * 2 > letters)
        || (chars.len() >= 6 && letters >= 4 && alternations >= 2)
}

fn lines_mut(items: &mut [(mupdf::Rect, Item)]) -> impl Iterator<Item = &mut Line> {
    items.iter_mut().flat_map(|(_, item)| -> Box<dyn Iterator<Item = &mut Line>> {
        match item {
            Item::Text(lines) => Box::new(lines.iter_mut()),
            Item::Table(_, rows) => Box::new(rows.iter_mut().flatten().flatten()),
            Item::Image(_) => Box::new(std::iter::empty()),
        }
    })
}

/// Whether the page's text layer should be checked against OCR: its suspect lines hold at
/// least [`PAGE_SUSPECT_GLYPHS`] glyphs.
pub(super) fn page_is_suspect(items: &mut [(mupdf::Rect, Item)]) -> bool {
    lines_mut(items).map(|l| suspect_glyphs(l)).sum::<usize>() >= PAGE_SUSPECT_GLYPHS
}

/// Characters compared: no whitespace or leaders, lower case (OCR and a text layer space and
/// case words differently, and OCR reads a row of dots as a few, without different text).
fn comparable(s: &str) -> String {
    s.chars().filter(|&c| !c.is_whitespace() && !leader(c)).flat_map(char::to_lowercase).collect()
}

/// On a page worth the check ([`page_is_suspect`]), gives a line the recognised words drawn
/// inside its box where they differ from its text layer: a suspect line when they are under
/// [`SAME_TEXT`] alike, any other line only when they share almost nothing
/// ([`STRANGER_TEXT`]) and OCR is sure of them ([`SURE`]): an encoding shifted against its
/// glyphs leaves words that look like words. Returns how many lines were replaced. `read` is
/// the page's OCR (upright text: its boxes are in the page's displayed space, from its top-left
/// corner).
pub(super) fn recognise_lines(items: &mut [(mupdf::Rect, Item)], read: &PageJson, bounds: mupdf::Rect) -> usize {
    let words: Vec<(f32, f32, &str, f32)> = read
        .blocks
        .iter()
        .flat_map(|b| &b.lines)
        .flat_map(|l| &l.words)
        .map(|w| {
            let [x0, y0, x1, y1] = w.bbox;
            ((x0 + x1) / 2.0 + bounds.x0, (y0 + y1) / 2.0 + bounds.y0, w.text.as_str(), w.confidence)
        })
        .collect();
    let mut taken = vec![false; words.len()];
    let mut replaced = 0;
    for line in lines_mut(items) {
        let suspect = suspect_glyphs(line) > 0;
        // A word belongs to the line its centre falls in (the box grown a little: detected
        // and drawn boxes differ by a few points).
        let pad = (line.y1 - line.y0) * 0.25;
        let inside: Vec<usize> = (0..words.len())
            .filter(|&i| {
                let (x, y, ..) = words[i];
                !taken[i] && x >= line.x0 - 2.0 && x <= line.x1 + 2.0 && y >= line.y0 - pad && y <= line.y1 + pad
            })
            .collect();
        let read_text = inside.iter().map(|&i| words[i].2).collect::<Vec<_>>().join(" ");
        let alnum = read_text.chars().filter(|c| c.is_alphanumeric()).count();
        if alnum == 0 {
            continue;
        }
        let alike = strsim::normalized_levenshtein(&comparable(&text_of(line)), &comparable(&read_text));
        let sure = inside.iter().map(|&i| words[i].3).sum::<f32>() / inside.len() as f32 >= SURE;
        let replace = if suspect { alike < SAME_TEXT } else { alike < STRANGER_TEXT && sure && alnum >= 4 };
        if !replace {
            continue;
        }
        for &i in &inside {
            taken[i] = true;
        }
        let style = line.runs[0].style.clone();
        line.runs = vec![Run { style, text: read_text }];
        line.unmapped_glyphs = 0;
        replaced += 1;
    }
    replaced
}

#[cfg(test)]
mod tests {
    use super::super::items::Style;
    use super::*;

    fn line(text: &str, unmapped: u32) -> Line {
        let style = Style {
            font: "F".into(),
            half_points: 20,
            bold: false,
            italic: false,
            underline: false,
            strike: false,
            color: 0,
        };
        Line {
            x0: 0.0,
            x1: 100.0,
            y0: 0.0,
            y1: 10.0,
            size: 10.0,
            runs: vec![Run { style, text: text.into() }],
            unmapped_glyphs: unmapped,
        }
    }

    #[test]
    fn replacement_private_use_and_control_characters_are_unusable() {
        assert!(unusable('\u{FFFD}'));
        assert!(unusable('\u{F0B7}'));
        assert!(unusable('\u{0003}'));
        assert!(!unusable('a') && !unusable('\n') && !unusable('é') && !unusable('中'));
    }

    #[test]
    fn lines_of_unmapped_glyphs_or_of_symbols_are_suspect_and_prose_leaders_and_bullets_are_not() {
        assert!(suspect_glyphs(&line("", 12)) > 0);
        assert!(suspect_glyphs(&line("#$%&' ()*+,", 0)) > 0, "a custom encoding read as ASCII symbols");
        assert_eq!(suspect_glyphs(&line("The quick brown fox", 0)), 0);
        assert_eq!(suspect_glyphs(&line("Chapter 1 ........................ 5", 0)), 0);
        assert_eq!(suspect_glyphs(&line("A bulleted item of a list", 1)), 0, "a private-use bullet");
        assert_eq!(suspect_glyphs(&line("x", 0)), 0);
        assert_eq!(suspect_glyphs(&line("‖x‖ ≤ ∑ αᵢ → ∞", 0)), 0, "a formula's symbols are its text");
        assert!(suspect_glyphs(&line("9HQXDXFLQpPDSDUOHGRFXPHQWDLUH 'RXUR'DLQDÀXYLDO 0DQRHOGH2OLYHLUD", 0)) > 0);
        assert!(suspect_glyphs(&line("VTCPUƂIWTGNGVGZVG Vwhvw grxpw", 0)) > 0, "letters shifted against the glyphs");
        assert_eq!(suspect_glyphs(&line("NYC SCHEDULE K-1 OTHER SUBTRACTIONS FROM INCOME", 0)), 0);
        assert_eq!(suspect_glyphs(&line("Schöne neue Welten, McDonald und iPhone", 0)), 0);
        assert_eq!(suspect_glyphs(&line("Приложение к договору", 0)), 0, "other scripts are not judged");
    }
}

//! Right-to-left words: which they are, and their characters in the order they are printed.

/// Whether a character is of a right-to-left script (Hebrew, Arabic, Syriac, Thaana, NKo,
/// Samaritan, Mandaic and their presentation forms).
pub fn is_rtl_char(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF | 0x10800..=0x10FFF | 0x1E800..=0x1EFFF)
}

/// Whether a word reads right to left: it has more right-to-left letters than others.
pub(super) fn is_rtl_word(text: &str) -> bool {
    let (mut rtl, mut other) = (0usize, 0usize);
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        if is_rtl_char(c) {
            rtl += 1;
        } else {
            other += 1;
        }
    }
    rtl > other
}

/// A right-to-left word's characters in the order they are printed, left to right (the
/// Unicode bidirectional algorithm on the word as a right-to-left paragraph): letters
/// reversed, a number inside keeps its digits left to right (`16-דט` is printed `טד-16`;
/// reversed whole, pdftotext read the number back as 61).
pub(super) fn visual_order(chars: &[char]) -> Vec<char> {
    let text: String = chars.iter().collect();
    let info = unicode_bidi::BidiInfo::new(&text, Some(unicode_bidi::Level::rtl()));
    match info.paragraphs.first() {
        Some(para) => info.reorder_line(para, para.range.clone()).chars().collect(),
        None => chars.iter().rev().copied().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_to_left_words_are_drawn_with_letters_reversed_and_numbers_left_to_right() {
        let visual = |s: &str| visual_order(&s.chars().collect::<Vec<_>>()).into_iter().collect::<String>();
        assert_eq!(visual("שלום"), "םולש");
        assert_eq!(visual("16-דט"), "טד-16");
        assert_eq!(visual("עמוד 2024"), "2024 דומע");
    }

    #[test]
    fn right_to_left_words_are_detected_by_their_letters() {
        assert!(is_rtl_word("مرحبا"));
        assert!(is_rtl_word("שלום"));
        assert!(!is_rtl_word("Hello"));
        assert!(!is_rtl_word("2026"));
    }
}

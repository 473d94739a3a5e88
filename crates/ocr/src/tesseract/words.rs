//! Where a line's words are really one: Tesseract splits the text of scripts written without
//! spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar) into several "words", and sometimes
//! splits an Indic word inside a conjunct; joined by spaces they read as spurious spaces in
//! the JSON and in the text layer. Such neighbours are merged into one word.

use super::api::TessWord;

/// Whether a character belongs to a script written without spaces between words.
pub fn is_unspaced(c: char) -> bool {
    (crate::languages::is_cjk(c) && !is_hangul(c))
        || matches!(c as u32,
            0x0E00..=0x0EFF      // Thai, Lao
            | 0x1000..=0x109F    // Myanmar
            | 0x1780..=0x17FF    // Khmer
            | 0x0F00..=0x0FFF)   // Tibetan (tsheg-separated, no spaces)
}

fn is_hangul(c: char) -> bool {
    matches!(c as u32, 0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F)
}

/// Indic scripts (Devanagari to Malayalam, Sinhala): a split inside a word there is a
/// split inside a syllable cluster when the gap is narrow.
fn is_indic(c: char) -> bool {
    matches!(c as u32, 0x0900..=0x0DFF)
}

/// A gap narrower than this share of the line's height between two Indic words is inside a
/// word: word spaces in Indic type are about a quarter of the em, the line box (headline,
/// upper and lower vowel signs) more than an em.
pub const INDIC_JOIN_GAP: f32 = 0.12;

/// Merges neighbouring words (in reading order) that are one word: both sides of the boundary
/// unspaced-script characters, or Indic characters with a gap under [`INDIC_JOIN_GAP`] of
/// `line_height`. `rtl`: the line runs right to left (the next word is to the left).
pub fn join_unspaced(words: Vec<TessWord>, line_height: f32, rtl: bool) -> Vec<TessWord> {
    let mut out: Vec<TessWord> = Vec::with_capacity(words.len());
    for w in words {
        if let Some(prev) = out.last_mut() {
            let (a, b) = (prev.text.chars().last(), w.text.chars().next());
            let gap = if rtl { prev.bbox[0] - w.bbox[2] } else { w.bbox[0] - prev.bbox[2] };
            let join = match (a, b) {
                (Some(a), Some(b)) if is_unspaced(a) && is_unspaced(b) => true,
                (Some(a), Some(b)) if is_indic(a) && is_indic(b) => gap < INDIC_JOIN_GAP * line_height,
                _ => false,
            };
            if join {
                let (na, nb) = (prev.text.chars().count() as f32, w.text.chars().count() as f32);
                prev.confidence = (prev.confidence * na + w.confidence * nb) / (na + nb);
                prev.text.push_str(&w.text);
                prev.bbox = [
                    prev.bbox[0].min(w.bbox[0]),
                    prev.bbox[1].min(w.bbox[1]),
                    prev.bbox[2].max(w.bbox[2]),
                    prev.bbox[3].max(w.bbox[3]),
                ];
                continue;
            }
        }
        out.push(w);
    }
    out
}

/// Whether a line reads right to left: more of its letters are right-to-left ones (Hebrew,
/// Arabic, Syriac, Thaana, N'Ko and their presentation forms) than not.
pub fn is_rtl_line(words: &[TessWord]) -> bool {
    let (mut rtl, mut ltr) = (0usize, 0usize);
    for c in words.iter().flat_map(|w| w.text.chars()).filter(|c| c.is_alphabetic()) {
        if matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF) {
            rtl += 1;
        } else {
            ltr += 1;
        }
    }
    rtl > ltr
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(text: &str, x0: f32, x1: f32) -> TessWord {
        TessWord { text: text.into(), confidence: 0.9, bbox: [x0, 0.0, x1, 40.0] }
    }
    fn texts(words: &[TessWord]) -> Vec<&str> {
        words.iter().map(|w| w.text.as_str()).collect()
    }

    #[test]
    fn thai_pieces_are_one_word_whatever_the_gap() {
        let out = join_unspaced(vec![w("สวัสดี", 0.0, 100.0), w("ครับ", 130.0, 200.0)], 40.0, false);
        assert_eq!(texts(&out), vec!["สวัสดีครับ"]);
        assert_eq!(out[0].bbox, [0.0, 0.0, 200.0, 40.0]);
    }

    #[test]
    fn chinese_and_japanese_pieces_are_one_word() {
        let out = join_unspaced(vec![w("人人生而", 0.0, 100.0), w("自由。", 110.0, 180.0)], 40.0, false);
        assert_eq!(texts(&out), vec!["人人生而自由。"]);
    }

    #[test]
    fn korean_words_keep_their_spaces() {
        let out = join_unspaced(vec![w("모든", 0.0, 60.0), w("인간은", 72.0, 150.0)], 40.0, false);
        assert_eq!(texts(&out), vec!["모든", "인간은"]);
    }

    #[test]
    fn an_indic_word_split_by_a_hairline_gap_is_joined_and_a_word_space_kept() {
        let out = join_unspaced(vec![w("स्व", 0.0, 40.0), w("तंत्र", 42.0, 90.0), w("हैं", 105.0, 130.0)], 40.0, false);
        assert_eq!(texts(&out), vec!["स्वतंत्र", "हैं"]);
    }

    #[test]
    fn latin_and_arabic_words_are_never_joined() {
        let out = join_unspaced(vec![w("a", 0.0, 10.0), w("b", 10.5, 20.0)], 40.0, false);
        assert_eq!(texts(&out), vec!["a", "b"]);
        // Right to left: the next word is to the left.
        let out = join_unspaced(vec![w("يولد", 100.0, 160.0), w("جميع", 20.0, 99.0)], 40.0, true);
        assert_eq!(texts(&out), vec!["يولد", "جميع"]);
    }

    #[test]
    fn right_to_left_lines_are_told_by_their_letters() {
        assert!(is_rtl_line(&[w("שלום", 0.0, 1.0), w("2024", 0.0, 1.0)]));
        assert!(is_rtl_line(&[w("سلام", 0.0, 1.0)]));
        assert!(!is_rtl_line(&[w("Привет", 0.0, 1.0), w("שלום", 0.0, 1.0)]));
    }
}

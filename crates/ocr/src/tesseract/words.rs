//! Where a line's words are really one. Tesseract's "words" of a script written without
//! spaces (Thai, Lao, Khmer, Myanmar) are pieces of a run, often single letters, and joined by
//! spaces they read as spurious spaces in the JSON and in the text layer; its line text knows
//! where it saw a space ([`super::api::TessLine::text`]). Chinese and Japanese pieces are
//! joined whatever the line text says (no space belongs between two of their characters).
//! Greek words take the Greek mu where the recogniser wrote the micro sign.

use super::api::TessWord;

/// Whether a character is Han, kana, or CJK punctuation: no space belongs between two of them
/// (Hangul is not: Korean is written with spaces).
pub fn is_unspaced_cjk(c: char) -> bool {
    crate::languages::is_cjk(c) && !matches!(c as u32, 0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F)
}

fn is_bidi_mark(c: char) -> bool {
    matches!(c as u32, 0x200E | 0x200F | 0x202A..=0x202E | 0x2066..=0x2069)
}

/// Merges neighbouring words (in reading order) between which `line_text` (Tesseract's text of
/// the line, the same words in the same order) has no space, and neighbouring Han or kana
/// pieces. Where the words cannot be found in `line_text` in order, they keep their spaces.
pub fn join_unspaced(words: Vec<TessWord>, line_text: &str) -> Vec<TessWord> {
    let text: Vec<char> = line_text.chars().filter(|c| !is_bidi_mark(*c)).collect();
    let mut pos = 0usize;
    let mut out: Vec<TessWord> = Vec::with_capacity(words.len());
    for w in words {
        let mut spaced = false;
        while pos < text.len() && text[pos].is_whitespace() {
            spaced = true;
            pos += 1;
        }
        let wc: Vec<char> = w.text.chars().filter(|c| !is_bidi_mark(*c)).collect();
        if text.get(pos..pos + wc.len()).is_some_and(|s| s == wc.as_slice()) {
            pos += wc.len();
        } else {
            // Out of step with the line text: keep the space, and look for the word further on.
            spaced = true;
            if let Some(i) = text[pos.min(text.len())..].windows(wc.len().max(1)).position(|s| s == wc.as_slice()) {
                pos += i + wc.len();
            }
        }
        if let Some(prev) = out.last_mut() {
            let cjk = prev.text.chars().last().is_some_and(is_unspaced_cjk)
                && w.text.chars().next().is_some_and(is_unspaced_cjk);
            if !spaced || cjk {
                merge(prev, w);
                continue;
            }
        }
        out.push(w);
    }
    for w in &mut out {
        greek_mu(w);
    }
    out
}

fn merge(prev: &mut TessWord, w: TessWord) {
    let (na, nb) = (prev.text.chars().count() as f32, w.text.chars().count() as f32);
    prev.confidence = (prev.confidence * na + w.confidence * nb) / (na + nb);
    prev.text.push_str(&w.text);
    prev.bbox = [
        prev.bbox[0].min(w.bbox[0]),
        prev.bbox[1].min(w.bbox[1]),
        prev.bbox[2].max(w.bbox[2]),
        prev.bbox[3].max(w.bbox[3]),
    ];
}

/// Tesseract's Greek model writes some mus as the micro sign (U+00B5, a Latin-1 symbol that
/// search and copy then miss); in a word of Greek letters it is the letter (U+03BC).
fn greek_mu(w: &mut TessWord) {
    let greek = |c: char| matches!(c as u32, 0x0370..=0x03FF | 0x1F00..=0x1FFF);
    if w.text.contains('\u{B5}') && w.text.chars().any(greek) {
        w.text = w.text.replace('\u{B5}', "\u{3BC}");
    }
}

/// Least gap left between two words' boxes, as a share of the line's height.
pub const MIN_WORD_GAP: f32 = 0.1;

/// Moves apart the boxes of neighbouring words (in reading order; the next word is to the left
/// on a right-to-left line) that overlap or nearly touch, splitting the difference, so that
/// each keeps at least [`MIN_WORD_GAP`] of `line_height` between them. Tesseract's boxes of
/// Indic words overlap where a vowel sign reaches over the space, and a text layer drawn over
/// overlapping boxes runs the words together (pdftotext read `को गौरव` as one word).
pub fn separate(words: &mut [TessWord], line_height: f32, rtl: bool) {
    let want = MIN_WORD_GAP * line_height;
    for i in 1..words.len() {
        let (left, right) = if rtl { (i, i - 1) } else { (i - 1, i) };
        let (end, start) = (words[left].bbox[2], words[right].bbox[0]);
        if start - end >= want {
            continue;
        }
        let mid = (end + start) / 2.0;
        let l = &mut words[left].bbox;
        l[2] = (mid - want / 2.0).max(l[0] + 1.0);
        let r = &mut words[right].bbox;
        r[0] = (mid + want / 2.0).min(r[2] - 1.0);
    }
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
    fn thai_pieces_join_where_the_line_text_has_no_space_and_keep_the_space_it_has() {
        let words = vec![w("สิท", 0.0, 30.0), w("ธิ", 30.0, 50.0), w("ต่า", 70.0, 90.0), w("ง", 90.0, 100.0)];
        let out = join_unspaced(words, "สิทธิ ต่าง\n");
        assert_eq!(texts(&out), vec!["สิทธิ", "ต่าง"]);
        assert_eq!(out[0].bbox, [0.0, 0.0, 50.0, 40.0]);
    }

    #[test]
    fn chinese_pieces_are_one_word_even_where_the_line_text_spaces_them() {
        let out = join_unspaced(vec![w("人人生而", 0.0, 100.0), w("自由。", 110.0, 180.0)], "人人生而 自由。");
        assert_eq!(texts(&out), vec!["人人生而自由。"]);
    }

    #[test]
    fn korean_devanagari_and_latin_words_keep_the_spaces_of_the_line_text() {
        let out = join_unspaced(vec![w("모든", 0.0, 60.0), w("인간은", 72.0, 150.0)], "모든 인간은");
        assert_eq!(texts(&out), vec!["모든", "인간은"]);
        // Overlapping boxes (a vowel sign reaching over the gap) do not join Indic words.
        let out = join_unspaced(vec![w("को", 440.0, 475.0), w("गौरव", 469.0, 549.0)], "को गौरव");
        assert_eq!(texts(&out), vec!["को", "गौरव"]);
    }

    #[test]
    fn right_to_left_words_are_matched_in_logical_order_past_the_direction_marks() {
        let out = join_unspaced(vec![w("يولد", 100.0, 160.0), w("جميع", 20.0, 99.0)], "\u{200F}يولد جميع");
        assert_eq!(texts(&out), vec!["يولد", "جميع"]);
    }

    #[test]
    fn words_out_of_step_with_the_line_text_keep_their_spaces() {
        let out = join_unspaced(vec![w("ab", 0.0, 10.0), w("cd", 10.0, 20.0)], "xy");
        assert_eq!(texts(&out), vec!["ab", "cd"]);
    }

    #[test]
    fn a_micro_sign_in_a_greek_word_is_the_letter_mu() {
        let out =
            join_unspaced(vec![w("δικαιώ\u{B5}ατα", 0.0, 10.0), w("5\u{B5}m", 20.0, 30.0)], "δικαιώ\u{B5}ατα 5\u{B5}m");
        assert_eq!(texts(&out), vec!["δικαιώματα", "5\u{B5}m"]);
    }

    #[test]
    fn overlapping_boxes_are_moved_apart_and_separate_ones_kept() {
        let mut words = vec![w("को", 440.0, 475.0), w("गौरव", 469.0, 549.0), w("और", 561.0, 625.0)];
        separate(&mut words, 40.0, false);
        assert_eq!(words[0].bbox[2], 470.0);
        assert_eq!(words[1].bbox[0], 474.0);
        assert_eq!((words[1].bbox[2], words[2].bbox[0]), (549.0, 561.0));
        // Right to left: the next word is on the left.
        let mut words = vec![w("שלום", 100.0, 160.0), w("עולם", 40.0, 101.0)];
        separate(&mut words, 40.0, true);
        assert_eq!((words[1].bbox[2], words[0].bbox[0]), (98.5, 102.5));
    }

    #[test]
    fn right_to_left_lines_are_told_by_their_letters() {
        assert!(is_rtl_line(&[w("שלום", 0.0, 1.0), w("2024", 0.0, 1.0)]));
        assert!(is_rtl_line(&[w("سلام", 0.0, 1.0)]));
        assert!(!is_rtl_line(&[w("Привет", 0.0, 1.0), w("שלום", 0.0, 1.0)]));
    }
}

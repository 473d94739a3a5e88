//! Letter case inside a word: a letter the recogniser could not tell from its other case
//! takes the case of the letter before it.
//!
//! Why: c o s v w x z (and, in small or blurred print, others) differ between their cases by
//! size only, and the recogniser reads one letter's size against the line: on the
//! LinnSequencer scans it read "tO" for "to" (O at 0.81, o at 0.18) and "FOOTsWITCH". Where
//! its runner-up is the same letter in the other case with at least [`CASE_DOUBT`], the case
//! of the nearest letter before it in the word that was read without doubt decides. A word's
//! first letter is left as read (a capital there is ordinary), and so is every letter read
//! without that doubt, so camel case read clearly ("LinnSequencer", "JavaScript") stays.

use crate::rec::Glyph;

/// Probability of the other case, as the runner-up, from which a letter's case is in doubt.
pub const CASE_DOUBT: f32 = 0.1;

/// Case of a single-letter glyph: Some(true) upper, Some(false) lower, None without case.
fn case_of(g: &Glyph) -> Option<bool> {
    let mut cs = g.ch.chars();
    match (cs.next(), cs.next()) {
        (Some(c), None) if c.is_uppercase() => Some(true),
        (Some(c), None) if c.is_lowercase() => Some(false),
        _ => None,
    }
}

/// Turns each letter in doubt ([`Glyph::other_case`] at least [`CASE_DOUBT`]) to the case
/// of the nearest letter before it in the same run of letters that was read without doubt.
pub fn case_by_neighbours(glyphs: &mut [Glyph]) {
    // Case of the last letter read without doubt since the last glyph without case.
    let mut anchor: Option<bool> = None;
    for g in glyphs.iter_mut() {
        let Some(own) = case_of(g) else {
            anchor = None;
            continue;
        };
        if g.other_case < CASE_DOUBT {
            anchor = Some(own);
        } else if anchor.is_some_and(|a| a != own) {
            g.ch = if own { g.ch.to_lowercase() } else { g.ch.to_uppercase() };
            std::mem::swap(&mut g.prob, &mut g.other_case);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glyphs(text: &str, doubt: &[f32]) -> Vec<Glyph> {
        text.chars()
            .zip(doubt)
            .enumerate()
            .map(|(i, (c, &d))| Glyph {
                ch: c.to_string(),
                start: 3 * i,
                end: 3 * i,
                prob: 1.0 - d,
                space_before: 0.0,
                recovered: false,
                other_case: d,
                runner_up: None,
            })
            .collect()
    }

    fn text(g: &[Glyph]) -> String {
        g.iter().map(|g| g.ch.as_str()).collect()
    }

    #[test]
    fn a_letter_in_doubt_takes_the_case_of_the_letter_before_it() {
        let mut g = glyphs("tO", &[0.0, 0.18]);
        case_by_neighbours(&mut g);
        assert_eq!(text(&g), "to");
        let mut g = glyphs("FOOTsWITCH", &[0.0, 0.0, 0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0, 0.0]);
        case_by_neighbours(&mut g);
        assert_eq!(text(&g), "FOOTSWITCH");
    }

    #[test]
    fn letters_read_without_doubt_and_first_letters_keep_their_case() {
        // Camel case read clearly, and a capital starting a word, even in doubt.
        let mut g = glyphs("LinnSequencer", &[0.0, 0.0, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        case_by_neighbours(&mut g);
        assert_eq!(text(&g), "LinnSequencer");
        let mut g = glyphs("Or", &[0.48, 0.0]);
        case_by_neighbours(&mut g);
        assert_eq!(text(&g), "Or");
        // Nor does a letter in doubt set the case of the next: "Controls" with C and o in doubt.
        let mut g = glyphs("Controls", &[0.48, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        case_by_neighbours(&mut g);
        assert_eq!(text(&g), "Controls");
    }
}

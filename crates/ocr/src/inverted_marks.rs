//! Spanish and Galician open every exclamation with `¡` and every question with `¿`; the
//! recognisers' dictionaries have no `¡` (PP-OCRv6's 18,385 classes), so a Spanish page
//! came back with its `!` unopened. For requests whose every language writes these marks,
//! a sentence that ends in `!` (or `?`) with no opening mark of its own gets one before its
//! first word.
//!
//! Where the exclamation starts inside the sentence (`Bueno, ¡vámonos!`) the mark lands at
//! the sentence's start instead (`¡Bueno, vámonos!`): a character out of place, where it was
//! missing. Found on the generated Spanish evaluation page (`¡Qué tiempos aquellos, ...!`).

use crate::PageText;

/// Tesseract-style codes of the languages that open exclamations and questions.
const OPENING_LANGUAGES: &[&str] = &["spa", "glg"];

/// Characters that close a sentence.
fn ends_sentence(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | ':' | ';' | '…')
}

/// Characters a word may carry after its sentence's last mark (quotes, brackets).
fn trailing(c: char) -> bool {
    matches!(c, '"' | '\'' | '»' | '”' | '’' | ')' | ']')
}

/// Adds the opening marks the sentences of `page` lack when every code of `languages`
/// writes them; returns how many. Sentences are read in reading order; a block ends one
/// unless the next block starts with a lower-case letter (the layout often gives each line
/// of a paragraph its own block).
pub fn open_sentences(page: &mut PageText, languages: &[String]) -> usize {
    if languages.is_empty() || !languages.iter().all(|l| OPENING_LANGUAGES.contains(&l.as_str())) {
        return 0;
    }
    // (block, line, word) of every word, in reading order.
    let order: Vec<(usize, usize, usize)> = page
        .blocks
        .iter()
        .enumerate()
        .flat_map(|(b, block)| {
            block.lines.iter().enumerate().flat_map(move |(l, line)| (0..line.words.len()).map(move |w| (b, l, w)))
        })
        .collect();
    fn text(page: &PageText, (b, l, w): (usize, usize, usize)) -> &str {
        &page.blocks[b].lines[l].words[w].text
    }
    let mut added = 0;
    let mut start = 0usize;
    let mut changed = Vec::new();
    for i in 0..order.len() {
        let word = text(page, order[i]);
        // A new block that does not continue a sentence starts one.
        if i > 0
            && order[i].0 != order[i - 1].0
            && !word.chars().find(|c| c.is_alphabetic()).is_some_and(char::is_lowercase)
        {
            start = i;
        }
        let Some(last) = word.trim_end_matches(trailing).chars().last().filter(|&c| ends_sentence(c)) else { continue };
        let opening = match last {
            '!' => Some('¡'),
            '?' => Some('¿'),
            _ => None,
        };
        if let Some(mark) = opening {
            if !order[start..=i].iter().any(|&at| text(page, at).contains(mark)) {
                let (b, l, w) = order[start];
                let first = &mut page.blocks[b].lines[l].words[w].text;
                // After any opening quotes or brackets.
                let at = first
                    .find(|c: char| !matches!(c, '"' | '\'' | '«' | '“' | '‘' | '(' | '[' | '—' | '–'))
                    .unwrap_or(0);
                first.insert(at, mark);
                changed.push((b, l));
                added += 1;
            }
        }
        start = i + 1;
    }
    for (b, l) in changed {
        let line = &mut page.blocks[b].lines[l];
        line.text = line.words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Block, Line, Word};

    fn page(lines: &[&str]) -> PageText {
        let word = |t: &str| Word {
            text: t.into(),
            confidence: 0.9,
            bbox: [0.0; 4],
            quad: [[0.0; 2]; 4],
            alternatives: Vec::new(),
        };
        let lines = lines
            .iter()
            .map(|l| Line {
                text: l.to_string(),
                confidence: 0.9,
                bbox: [0.0; 4],
                quad: [[0.0; 2]; 4],
                words: l.split(' ').map(word).collect(),
            })
            .collect();
        PageText { width: 100, height: 100, rotation: 0, blocks: vec![Block { bbox: [0.0; 4], lines }] }
    }

    fn texts(p: &PageText) -> Vec<String> {
        p.blocks[0].lines.iter().map(|l| l.text.clone()).collect()
    }

    #[test]
    fn an_unopened_exclamation_is_opened_at_its_sentence_start_even_on_an_earlier_line() {
        let mut p = page(&["la próxima feria. Qué tiempos", "aquellos, cuando el señor abría su librería!"]);
        assert_eq!(open_sentences(&mut p, &["spa".into()]), 1);
        assert_eq!(texts(&p), ["la próxima feria. ¡Qué tiempos", "aquellos, cuando el señor abría su librería!"]);
    }

    #[test]
    fn a_sentence_continues_into_a_block_that_starts_in_lower_case() {
        // Each line its own block, as the layout gives a paragraph's lines at times.
        let mut p = page(&["la feria. Qué tiempos"]);
        let mut next = page(&["aquellos, cuando abría su librería!"]);
        let mut heading = page(&["Capítulo uno"]);
        let mut last = page(&["Hola! ¿Quién", "viene?"]);
        p.blocks.append(&mut next.blocks);
        p.blocks.append(&mut heading.blocks);
        p.blocks.append(&mut last.blocks);
        assert_eq!(open_sentences(&mut p, &["spa".into()]), 2);
        let all: Vec<&str> = p.blocks.iter().flat_map(|b| &b.lines).map(|l| l.text.as_str()).collect();
        assert_eq!(
            all,
            [
                "la feria. ¡Qué tiempos",
                "aquellos, cuando abría su librería!",
                "Capítulo uno",
                "¡Hola! ¿Quién",
                "viene?"
            ]
        );
    }

    #[test]
    fn opened_sentences_quotes_and_other_languages_are_left_alone() {
        let mut p = page(&["¿Quién no recuerda? Dijo: «Hola!»"]);
        assert_eq!(open_sentences(&mut p, &["spa".into()]), 1);
        assert_eq!(texts(&p), ["¿Quién no recuerda? Dijo: «¡Hola!»"]);
        let mut p = page(&["What a day! Really?"]);
        assert_eq!(open_sentences(&mut p, &["spa".into(), "eng".into()]), 0);
        assert_eq!(open_sentences(&mut p, &[]), 0);
        assert_eq!(texts(&p), ["What a day! Really?"]);
    }
}

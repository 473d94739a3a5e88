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
/// writes them; returns how many. Sentences are read block by block, in reading order.
pub fn open_sentences(page: &mut PageText, languages: &[String]) -> usize {
    if languages.is_empty() || !languages.iter().all(|l| OPENING_LANGUAGES.contains(&l.as_str())) {
        return 0;
    }
    let mut added = 0;
    for block in &mut page.blocks {
        // (line, word) of every word of the block, in reading order.
        let order: Vec<(usize, usize)> =
            block.lines.iter().enumerate().flat_map(|(l, line)| (0..line.words.len()).map(move |w| (l, w))).collect();
        let mut start = 0usize;
        let mut changed_lines = Vec::new();
        for (i, &(l, w)) in order.iter().enumerate() {
            let text = block.lines[l].words[w].text.trim_end_matches(trailing);
            let Some(last) = text.chars().last().filter(|&c| ends_sentence(c)) else { continue };
            let opening = match last {
                '!' => Some('¡'),
                '?' => Some('¿'),
                _ => None,
            };
            if let Some(mark) = opening {
                let opened = order[start..=i].iter().any(|&(l, w)| block.lines[l].words[w].text.contains(mark));
                if !opened {
                    let (sl, sw) = order[start];
                    let word = &mut block.lines[sl].words[sw].text;
                    // After any opening quotes or brackets.
                    let at = word
                        .find(|c: char| !matches!(c, '"' | '\'' | '«' | '“' | '‘' | '(' | '[' | '—' | '–'))
                        .unwrap_or(0);
                    word.insert(at, mark);
                    changed_lines.push(sl);
                    added += 1;
                }
            }
            start = i + 1;
        }
        for l in changed_lines {
            let line = &mut block.lines[l];
            line.text = line.words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
        }
    }
    added
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Block, Line, Word};

    fn page(lines: &[&str]) -> PageText {
        let word = |t: &str| Word { text: t.into(), confidence: 0.9, bbox: [0.0; 4], quad: [[0.0; 2]; 4] };
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

//! Quote style of a page: on a page set with typographic quotes, the apostrophes and closing
//! quotes the recogniser read as straight ones are given their typographic form.
//!
//! Why: the recogniser tells a typographic opening quote (‘ “, shaped like a 6) from a straight
//! one, but reads the 9-shaped apostrophe and closing quotes (’ ”) as straight ones: on the
//! corpus and evaluation pages it never wrote ’ inside a word ("It's" for the printed "It’s",
//! the ’ class at 0.02-0.2 beside '), while the same pages opened their quotes with ‘ and “.
//! A page sets its quotes in one style, so the opening quotes read tell the style of the
//! others. A page whose straight opening quotes outnumber its typographic ones (typewriter
//! text, code) is left as read.

use crate::gutter::RecLine;

/// Whether the quotes read on the page say it is set with typographic quotes: more typographic
/// quotes (‘ ’ “ ”, as read) than straight opening quotes (a word starting with ' or " then a
/// letter or digit).
pub fn typographic_page<'a>(words: impl Iterator<Item = &'a str>) -> bool {
    let (mut typographic, mut straight) = (0usize, 0usize);
    for w in words {
        typographic += w.chars().filter(|c| matches!(c, '\u{2018}' | '\u{2019}' | '\u{201C}' | '\u{201D}')).count();
        let mut cs = w.chars();
        if matches!(cs.next(), Some('\'' | '"')) && cs.next().is_some_and(char::is_alphanumeric) {
            straight += 1;
        }
    }
    typographic > straight
}

/// One word in typographic quotes: ' after a letter, a digit or closing punctuation is an
/// apostrophe or a closing quote (’); " there (or after a closing bracket or quote) is a
/// closing quote (”), " starting a word or after an opening bracket or quote, before a
/// letter or digit, an opening one (“). A ' starting a word is left alone (an
/// opening quote or an elision: the recogniser reads the opening ‘ itself).
pub fn typographic_word(word: &str) -> String {
    let chars: Vec<char> = word.chars().collect();
    let mut out = String::with_capacity(word.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|j| chars[j]);
        let next = chars.get(i + 1).copied();
        let after_text = prev.is_some_and(|p| p.is_alphanumeric() || matches!(p, '.' | ',' | ';' | ':' | '!' | '?'));
        let closes = after_text || prev.is_some_and(|p| matches!(p, ')' | ']' | '\u{2019}' | '\u{201D}'));
        let opens = prev.is_none_or(|p| matches!(p, '(' | '[' | '\u{2018}' | '\u{201C}'));
        out.push(match c {
            '\'' if after_text => '\u{2019}',
            '"' if closes => '\u{201D}',
            '"' if opens && next.is_some_and(char::is_alphanumeric) => '\u{201C}',
            c => c,
        });
    }
    out
}

/// Gives the words of every line their typographic quotes when the page is set with them
/// ([`typographic_page`]).
pub fn apply(lines: &mut [RecLine]) {
    if !typographic_page(lines.iter().flat_map(|l| l.1.iter().map(|w| w.0.as_str()))) {
        return;
    }
    for line in lines {
        for word in &mut line.1 {
            if word.0.contains(['\'', '"']) {
                word.0 = typographic_word(&word.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn apostrophes_and_closing_quotes_take_the_style_of_the_opening_quotes() {
        let words = ["It's", "without", "\u{2018}chopping'", "notes.", "\u{201C}chain\"", "you'll", "3\u{BD}\""];
        assert!(typographic_page(words.iter().copied()));
        let out: Vec<String> = words.iter().map(|w| typographic_word(w)).collect();
        assert_eq!(
            out,
            [
                "It\u{2019}s",
                "without",
                "\u{2018}chopping\u{2019}",
                "notes.",
                "\u{201C}chain\u{201D}",
                "you\u{2019}ll",
                "3\u{BD}\u{201D}"
            ]
        );
        // A straight opening quote on such a page is an opening quote too; a lone ' starting a
        // word is left as read.
        assert_eq!(typographic_word("\"trust,\""), "\u{201C}trust,\u{201D}");
        assert_eq!(typographic_word("'90s"), "'90s");
        // After an opening quote, " opens too.
        assert_eq!(typographic_word("\u{201C}\"Typical"), "\u{201C}\u{201C}Typical");
    }

    #[test]
    fn a_page_without_typographic_quotes_keeps_its_straight_ones() {
        assert!(!typographic_page(["It's", "\"plain\"", "text"].into_iter()));
    }

    #[test]
    fn straight_opening_quotes_outvoting_typographic_ones_keep_the_page_straight() {
        // Code or typewriter text with one misread curly quote.
        assert!(!typographic_page(["print(\"a\")", "'b'", "\"c\"", "\u{201C}d\""].into_iter()));
    }
}

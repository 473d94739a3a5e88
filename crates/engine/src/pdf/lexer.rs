//! One lexer for PDF's token syntax (ISO 32000-2, 7.2-7.3): names, strings, arrays,
//! dictionaries, comments and bare words (numbers, keywords, operators).
//!
//! It serves the readers that look at raw syntax without MuPDF's parser: the content
//! stream checker ([`crate::pdf::content_syntax`]), the ToUnicode cutter and the xref
//! repacker of compress. Each token keeps its source bytes; what a caller does not
//! expect (a comment, a brace) is its own decision. Binary data (an inline image after
//! `ID`) is the caller's to skip: it moves [`Lexer::pos`].

/// PDF white space: NUL, tab, line feed, form feed, carriage return, space.
pub fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0C | 0)
}

/// PDF delimiters: they end a word or a name.
pub fn is_delimiter(c: u8) -> bool {
    matches!(c, b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%')
}

/// What a token is; its bytes are [`Token::text`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `/Name`, slash included.
    Name,
    /// `( ... )` with its parentheses (balanced nesting, backslash escapes).
    Literal,
    /// `< ... >` with its brackets: hex digits and white space.
    Hex,
    ArrayOpen,
    ArrayClose,
    DictOpen,
    DictClose,
    /// `{` and `}` (PostScript calculator functions; an error in content streams).
    BraceOpen,
    BraceClose,
    /// `%` to the end of the line.
    Comment,
    /// Anything else: a number, `true`, an operator, `obj`, `R`...
    Word,
}

/// One token: its kind and its source bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    pub kind: Kind,
    pub text: &'a [u8],
}

/// Syntax no reader can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LexError {
    /// A literal string without its closing parenthesis.
    UnterminatedString,
    /// A hex string without `>`, or with a byte that is no hex digit nor white space.
    BadHex,
    /// A closing `)` or a single `>` with nothing open.
    StrayDelimiter(u8),
}

/// Tokens of `s` in order; after an error the lexer stops.
pub struct Lexer<'a> {
    s: &'a [u8],
    /// Where the next token is read from.
    pub pos: usize,
    failed: bool,
}

impl<'a> Lexer<'a> {
    pub fn new(s: &'a [u8]) -> Self {
        Lexer { s, pos: 0, failed: false }
    }

    fn token(&mut self, kind: Kind, end: usize) -> Option<Result<Token<'a>, LexError>> {
        let text = &self.s[self.pos..end];
        self.pos = end;
        Some(Ok(Token { kind, text }))
    }

    fn fail(&mut self, e: LexError) -> Option<Result<Token<'a>, LexError>> {
        self.failed = true;
        Some(Err(e))
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Result<Token<'a>, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        let s = self.s;
        while self.pos < s.len() && is_space(s[self.pos]) {
            self.pos += 1;
        }
        if self.failed || self.pos >= s.len() {
            return None;
        }
        let i = self.pos;
        let word_end = |from: usize| {
            from + s[from..].iter().position(|&c| is_space(c) || is_delimiter(c)).unwrap_or(s.len() - from)
        };
        match s[i] {
            b'%' => {
                let end = i + s[i..].iter().position(|&c| c == b'\n' || c == b'\r').unwrap_or(s.len() - i);
                self.token(Kind::Comment, end)
            }
            b'/' => self.token(Kind::Name, word_end(i + 1)),
            b'(' => {
                let mut depth = 0usize;
                let mut j = i;
                while j < s.len() {
                    match s[j] {
                        b'\\' => j += 1,
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                return self.token(Kind::Literal, j + 1);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                self.fail(LexError::UnterminatedString)
            }
            b'<' if s.get(i + 1) == Some(&b'<') => self.token(Kind::DictOpen, i + 2),
            b'>' if s.get(i + 1) == Some(&b'>') => self.token(Kind::DictClose, i + 2),
            b'<' => {
                let mut j = i + 1;
                while j < s.len() && (s[j].is_ascii_hexdigit() || is_space(s[j])) {
                    j += 1;
                }
                if j < s.len() && s[j] == b'>' {
                    self.token(Kind::Hex, j + 1)
                } else {
                    self.fail(LexError::BadHex)
                }
            }
            b'[' => self.token(Kind::ArrayOpen, i + 1),
            b']' => self.token(Kind::ArrayClose, i + 1),
            b'{' => self.token(Kind::BraceOpen, i + 1),
            b'}' => self.token(Kind::BraceClose, i + 1),
            c @ (b')' | b'>') => self.fail(LexError::StrayDelimiter(c)),
            _ => self.token(Kind::Word, word_end(i)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &[u8]) -> Vec<(Kind, &[u8])> {
        Lexer::new(s).map(|t| t.map(|t| (t.kind, t.text)).unwrap()).collect()
    }

    #[test]
    fn every_kind_of_token_keeps_its_source_bytes() {
        let got = kinds(b"<</Type/XRef/W[1 4 1]/ID[<AB 0c><CD>] /P (a\\) (b) c)>> % note\n{ 1 add } true");
        use Kind::*;
        assert_eq!(
            got,
            vec![
                (DictOpen, &b"<<"[..]),
                (Name, b"/Type"),
                (Name, b"/XRef"),
                (Name, b"/W"),
                (ArrayOpen, b"["),
                (Word, b"1"),
                (Word, b"4"),
                (Word, b"1"),
                (ArrayClose, b"]"),
                (Name, b"/ID"),
                (ArrayOpen, b"["),
                (Hex, b"<AB 0c>"),
                (Hex, b"<CD>"),
                (ArrayClose, b"]"),
                (Name, b"/P"),
                (Literal, b"(a\\) (b) c)"),
                (DictClose, b">>"),
                (Comment, b"% note"),
                (BraceOpen, b"{"),
                (Word, b"1"),
                (Word, b"add"),
                (BraceClose, b"}"),
                (Word, b"true"),
            ]
        );
    }

    #[test]
    fn unterminated_strings_bad_hex_and_stray_closers_are_errors_and_end_the_tokens() {
        for (s, e) in [
            (&b"(abc"[..], LexError::UnterminatedString),
            (b"<4142", LexError::BadHex),
            (b"<41zz>", LexError::BadHex),
            (b")", LexError::StrayDelimiter(b')')),
            (b"> x", LexError::StrayDelimiter(b'>')),
        ] {
            let mut l = Lexer::new(s);
            assert_eq!(l.next(), Some(Err(e)), "{s:?}");
            assert_eq!(l.next(), None, "{s:?}");
        }
    }

    #[test]
    fn a_caller_can_skip_binary_data_by_moving_pos() {
        let s = b"ID \x00)(> EI Q";
        let mut l = Lexer::new(s);
        assert_eq!(l.next().unwrap().unwrap().text, b"ID");
        l.pos = 8;
        assert_eq!(l.next().unwrap().unwrap().text, b"EI");
        assert_eq!(l.next().unwrap().unwrap().text, b"Q");
    }
}

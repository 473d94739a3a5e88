//! Page content streams whose syntax is broken (fuzzed or damaged files): detection, and
//! a rewrite through MuPDF's content filter so other readers see what MuPDF renders.
//!
//! MuPDF's interpreter skips what it cannot parse and goes on; poppler (pdftotext) and
//! others stop at the first unknown keyword or unterminated string, so a page that
//! MuPDF renders in full can read back empty elsewhere. The lexer here flags a page's
//! content when it has a keyword that is no content operator (outside `BX`/`EX`), an
//! unterminated string, hex string or inline image, a stray closing delimiter, or
//! unbalanced arrays and dictionaries. Only flagged pages are rewritten (the filter
//! re-serialises what MuPDF parsed); well-formed content is never touched.

use mupdf::pdf::{PdfDocument, PdfFilterOptions, PdfObject};

use crate::control::JobControl;
use crate::error::Result;
use crate::pdf::lexer::{is_delimiter, is_space, Kind, Lexer};

/// Every operator of the PDF content stream syntax (ISO 32000-2, annex A), plus the
/// three literal keywords.
const OPERATORS: &[&[u8]] = &[
    b"b", b"B", b"b*", b"B*", b"BDC", b"BI", b"BMC", b"BT", b"BX", b"c", b"cm", b"CS", b"cs", b"d", b"d0", b"d1",
    b"Do", b"DP", b"EI", b"EMC", b"ET", b"EX", b"f", b"F", b"f*", b"G", b"g", b"gs", b"h", b"i", b"ID", b"j", b"J",
    b"K", b"k", b"l", b"m", b"M", b"MP", b"n", b"q", b"Q", b"re", b"RG", b"rg", b"ri", b"s", b"S", b"SC", b"sc",
    b"SCN", b"scn", b"sh", b"T*", b"Tc", b"Td", b"TD", b"Tf", b"Tj", b"TJ", b"TL", b"Tm", b"Tr", b"Ts", b"Tw", b"Tz",
    b"v", b"w", b"W", b"W*", b"y", b"'", b"\"", b"true", b"false", b"null",
];

/// True when `content` (a page's decoded content, its streams concatenated) has a
/// syntax error another reader would stop at (see the module documentation).
pub fn has_syntax_errors(content: &[u8]) -> bool {
    let (mut arrays, mut dicts, mut compat) = (0usize, 0usize, 0usize);
    let mut lexer = Lexer::new(content);
    while let Some(token) = lexer.next() {
        let Ok(token) = token else { return true };
        match token.kind {
            Kind::Comment | Kind::Name | Kind::Literal | Kind::Hex => {}
            Kind::DictOpen => dicts += 1,
            Kind::ArrayOpen => arrays += 1,
            Kind::DictClose if dicts == 0 => return true,
            Kind::DictClose => dicts -= 1,
            Kind::ArrayClose if arrays == 0 => return true,
            Kind::ArrayClose => arrays -= 1,
            Kind::BraceOpen | Kind::BraceClose => return true,
            Kind::Word => {
                let word = token.text;
                if is_number(word) {
                    continue;
                }
                match word {
                    b"BX" => compat += 1,
                    b"EX" => compat = compat.saturating_sub(1),
                    b"ID" => match skip_inline_image(content, lexer.pos) {
                        Some(end) => lexer.pos = end,
                        None => return true,
                    },
                    _ if compat == 0 && !OPERATORS.contains(&word) => return true,
                    _ => {}
                }
            }
        }
    }
    arrays != 0 || dicts != 0
}

fn is_number(word: &[u8]) -> bool {
    let digits = word.strip_prefix(b"-").or_else(|| word.strip_prefix(b"+")).unwrap_or(word);
    !digits.is_empty()
        && digits.iter().any(u8::is_ascii_digit)
        && digits.iter().all(|&c| c.is_ascii_digit() || c == b'.')
        && digits.iter().filter(|&&c| c == b'.').count() <= 1
}

/// From just after the `ID` keyword: the index after the inline image's `EI`, which
/// must stand alone (white space before it, white space, a delimiter or the end after).
pub(crate) fn skip_inline_image(content: &[u8], from: usize) -> Option<usize> {
    let mut i = from + 1;
    while i + 2 <= content.len() {
        if &content[i..i + 2] == b"EI"
            && is_space(content[i - 1])
            && content.get(i + 2).is_none_or(|&c| is_space(c) || is_delimiter(c))
        {
            return Some(i + 2);
        }
        i += 1;
    }
    None
}

/// Decoded content of one page (its streams concatenated with a separating space, as
/// the interpreter reads them); `None` when it cannot be read (the page is left alone).
pub(crate) fn page_content(page: &PdfObject) -> Option<Vec<u8>> {
    let contents = page.get_dict("Contents").ok()??;
    let streams: Vec<PdfObject> = if contents.is_array().unwrap_or(false) {
        contents.array_iter().ok()?.collect::<std::result::Result<_, _>>().ok()?
    } else {
        vec![contents]
    };
    let mut out = Vec::new();
    for stream in streams {
        if !stream.is_stream().unwrap_or(false) {
            continue;
        }
        out.extend_from_slice(&stream.read_stream().ok()?);
        out.push(b'\n');
    }
    Some(out)
}

/// Rewrites through MuPDF's content filter the content of every page whose syntax is
/// broken and of the pages listed in `truncated` (0-based: pages whose content
/// [`crate::pdf::content::repair_page_contents`] cut short at damaged data). Returns the
/// 0-based indices of the rewritten pages (their resources are left as they are:
/// [`crate::pdf::resources`] drops those no longer named). Call after
/// `repair_page_contents` (which bounds the decoded size).
pub(crate) fn clean_damaged_contents(
    doc: &PdfDocument,
    pages: &[PdfObject],
    truncated: &[usize],
    control: &JobControl,
) -> Result<Vec<usize>> {
    let mut cleaned = Vec::new();
    for (index, page) in pages.iter().enumerate() {
        control.checkpoint()?;
        if !truncated.contains(&index) {
            let Some(content) = page_content(page) else { continue };
            if !has_syntax_errors(&content) {
                continue;
            }
        }
        // A page the filter cannot rewrite keeps its content as it is (MuPDF still
        // renders it; only other readers stop early).
        let rewritten = doc.load_pdf_page(index as i32).and_then(|mut p| p.filter(PdfFilterOptions::default()));
        if rewritten.is_ok() {
            cleaned.push(index);
        }
    }
    Ok(cleaned)
}

#[cfg(test)]
mod tests {
    use super::has_syntax_errors;

    #[test]
    fn well_formed_content_is_not_flagged() {
        let content = b"q 1 0 0 1 72 720 cm BT /F1 12 Tf (Hello \\(world\\)) Tj [(A) -120 (B)] TJ ET Q\n\
            /P <</MCID 0>> BDC <48656c6c6f> Tj EMC 0.5 g 10 10 100 100 re f\n\
            BI /W 2 /H 1 /BPC 8 /CS /G ID \x00\xff EI % comment\nBX /X foo EX";
        assert!(!has_syntax_errors(content));
    }

    #[test]
    fn an_unknown_keyword_outside_compatibility_sections_is_flagged() {
        assert!(has_syntax_errors(b"BT /F1 12 Tf (a) Tj xyzzy ET"));
        assert!(!has_syntax_errors(b"BX BT /F1 12 Tf (a) Tj xyzzy ET EX"));
    }

    #[test]
    fn unterminated_strings_and_inline_images_are_flagged() {
        assert!(has_syntax_errors(b"BT (abc Tj ET"));
        assert!(has_syntax_errors(b"BT <4142 Tj ET"));
        assert!(has_syntax_errors(b"BT <41zz> Tj ET"));
        assert!(has_syntax_errors(b"BI /W 1 /H 1 ID \x00\x01\x02"));
    }

    #[test]
    fn stray_and_unbalanced_delimiters_are_flagged() {
        assert!(has_syntax_errors(b"BT (a) Tj ] ET"));
        assert!(has_syntax_errors(b"BT [(a) TJ ET"));
        assert!(has_syntax_errors(b"q >> Q"));
        assert!(has_syntax_errors(b"q ) Q"));
        assert!(has_syntax_errors(b"q { Q"));
    }
}

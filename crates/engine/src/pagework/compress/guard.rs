//! The content guard of the lossy levels: a compressed file must keep every page and
//! every extractable word. MuPDF's image rewriter filters the pages' content streams
//! and rewrites their resources as it goes, and on some files that damages them (on
//! pdf20-utf8-test.pdf, whose one image has corrupt flate data, the page's font
//! reference becomes null and the text is gone). So after a lossy run the output is
//! compared with its source page by page, and a run that lost content is redone on a
//! safer path (src/pagework/compress.rs).
//!
//! The rule: the page count is the same, and on every page each word of the source's
//! MuPDF text (structured text, default flags; words split at whitespace and where the
//! font changes, so spacing and line breaks do not count) occurs in the output's text
//! at least as often, in a font of the same name (a Type3 font's name without the object
//! number MuPDF puts in it, which the save renumbers; a subset tag `ABCDEF+` does not
//! count, as subsetting gives the same font a new tag). The font matters: when a page's
//! font resource is lost MuPDF still extracts the text of simple fonts, drawn in a
//! substitute font (that is how pdf20-utf8-test.pdf's damage shows), while other
//! readers (pdftotext) extract nothing and the page looks different. Extra words are
//! not a loss. A page whose text MuPDF cannot extract from the source is
//! not compared; one that the source has and the output cannot give is a loss.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{EngineError, ErrorCode, Result};
use crate::pdf::private_doc::{PrivateDoc, LINE_END};

/// Word counts of one page; `None` when its text could not be extracted.
type PageWords = Option<HashMap<String, u32>>;

/// Documents with at least this many pages are read on two threads (each with its own
/// opening): text extraction was a quarter of a 117-page balanced run.
const PARALLEL_FROM_PAGES: usize = 8;

/// The words of every page of the PDF at `path`. Each thread opens the file in a MuPDF
/// context of its own (src/pdf/private_doc.rs): on the mupdf crate's shared context the
/// two threads waited on each other's allocation lock, and the crate's per-character
/// font lookups allocated; colour management is off, as text has no use for it
/// (geotopo-117-pages.pdf: the output's words 145 -> 80 ms on two threads).
pub(crate) fn page_words(path: &Path) -> Result<Vec<PageWords>> {
    let open = || {
        let doc = PrivateDoc::open(path, 2)
            .map_err(|e| EngineError::new(ErrorCode::EngineError, format!("checking the output: {}", e.message)))?
            .without_icc();
        let n = doc
            .page_count()
            .ok_or_else(|| EngineError::new(ErrorCode::EngineError, "checking the output: no page count"))?;
        Ok::<_, EngineError>((doc, n))
    };
    let (doc, n) = open()?;
    if n < PARALLEL_FROM_PAGES {
        let mut fonts = Fonts::default();
        return Ok((0..n).map(|i| words_of(&doc, i, &mut fonts)).collect());
    }
    // The second half on a helper thread; a helper that cannot open the file (it was
    // just opened here) leaves its pages to this thread.
    let half = n / 2;
    std::thread::scope(|s| {
        let helper = s.spawn(|| {
            open().ok().map(|(d, _)| {
                let mut fonts = Fonts::default();
                (half..n).map(|i| words_of(&d, i, &mut fonts)).collect::<Vec<_>>()
            })
        });
        let mut fonts = Fonts::default();
        let mut words: Vec<PageWords> = (0..half).map(|i| words_of(&doc, i, &mut fonts)).collect();
        match helper.join().ok().flatten() {
            Some(rest) => words.extend(rest),
            None => words.extend((half..n).map(|i| words_of(&doc, i, &mut fonts))),
        }
        Ok(words)
    })
}

/// The compared names ([`font_key`]) of one opening's font slots, looked up once each.
#[derive(Default)]
struct Fonts(Vec<Option<String>>);

impl Fonts {
    fn key(&mut self, doc: &PrivateDoc, slot: u32) -> &str {
        if slot == LINE_END {
            return "";
        }
        let i = slot as usize;
        if self.0.len() <= i {
            self.0.resize(i + 1, None);
        }
        self.0[i].get_or_insert_with(|| font_key(&doc.font_name(slot)))
    }
}

fn words_of(doc: &PrivateDoc, index: usize, fonts: &mut Fonts) -> PageWords {
    let text = doc.text(index)?;
    let mut counts = HashMap::new();
    let mut word = String::new();
    let mut font = String::new();
    let mut flush = |word: &mut String, font: &str| {
        if !word.is_empty() {
            *counts.entry(format!("{word} [{font}]")).or_insert(0u32) += 1;
            word.clear();
        }
    };
    for &[c, slot] in text.pairs() {
        if c == LINE_END {
            flush(&mut word, &font);
            continue;
        }
        let c = char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER);
        if c.is_whitespace() {
            flush(&mut word, &font);
            continue;
        }
        let name = fonts.key(doc, slot);
        if name != font {
            flush(&mut word, &font);
            font.clear();
            font.push_str(name);
        }
        word.push(c);
    }
    Some(counts)
}

/// A font's name as compared. MuPDF names a Type3 font without /Name after its object
/// number (`Type3 (218 0 R)`), which the save's garbage collection renumbers. It keeps at most
/// [`FONT_NAME_BYTES`] bytes of a name, so a subset tag pushes the end of a long name off
/// (`Droid Sans Fallback Regular` comes back as `FDWHKA+Droid Sans Fallback Regu`), and it
/// names an embedded font by its program's name or by /BaseFont, which subsetting may change
/// in spelling (`NimbusSans-Regular` before, `Nimbus Sans Regular` after). So names are
/// compared without their tag, on the bytes both sides keep, by letters and digits alone.
fn font_key(name: &str) -> String {
    if name.starts_with("Type3 (") && name.ends_with(" R)") {
        return "Type3".to_owned();
    }
    let name = strip_subset_tag(name);
    let mut end = name.len().min(FONT_NAME_BYTES - SUBSET_TAG_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].chars().filter(|c| c.is_alphanumeric()).take(KEY_CHARS).collect()
}

/// The bytes of a font's name MuPDF keeps (`fz_font.name` is 32 bytes with its NUL).
const FONT_NAME_BYTES: usize = 31;
/// `ABCDEF+`.
const SUBSET_TAG_BYTES: usize = 7;
/// Letters and digits compared: what 24 bytes keep of a name with a few separators.
const KEY_CHARS: usize = 20;

/// A font name without its subset tag (`ABCDEF+Name` -> `Name`): font subsetting
/// (src/pagework/compress.rs) tags the fonts it subsets, the same font under a new tag.
fn strip_subset_tag(name: &str) -> &str {
    let b = name.as_bytes();
    if b.len() > 7 && b[6] == b'+' && b[..6].iter().all(u8::is_ascii_uppercase) {
        &name[7..]
    } else {
        name
    }
}

/// What the output at `output` lost against `source` (see the module docs), or `None`
/// when it kept everything. An output that cannot be read at all is a loss.
pub(crate) fn lost_content(source: &[PageWords], output: &Path) -> Option<String> {
    match page_words(output) {
        Ok(after) => compare(source, &after),
        Err(e) => Some(e.message),
    }
}

fn compare(source: &[PageWords], after: &[PageWords]) -> Option<String> {
    if after.len() != source.len() {
        return Some(format!("{} pages instead of {}", after.len(), source.len()));
    }
    for (i, (b, a)) in source.iter().zip(after).enumerate() {
        let Some(b) = b else { continue };
        let Some(a) = a else {
            return Some(format!("page {}: text not extractable", i + 1));
        };
        let missing: u32 = b.iter().map(|(w, &n)| n.saturating_sub(a.get(w).copied().unwrap_or(0))).sum();
        if missing > 0 {
            return Some(format!("page {}: {missing} words lost", i + 1));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> PageWords {
        let mut m = HashMap::new();
        for w in s.split_whitespace() {
            *m.entry(w.to_owned()).or_insert(0) += 1;
        }
        Some(m)
    }

    #[test]
    fn spacing_and_extra_words_are_not_a_loss() {
        assert_eq!(compare(&[words("a  b\nc c")], &[words("a b c\tc d")]), None);
    }

    #[test]
    fn a_missing_or_less_frequent_word_is_a_loss() {
        let r = compare(&[words("x"), words("a b c c")], &[words("x"), words("a b c")]);
        assert_eq!(r.as_deref(), Some("page 2: 1 words lost"));
        assert!(compare(&[words("a b")], &[words("")]).is_some());
    }

    #[test]
    fn page_count_and_unextractable_pages() {
        assert!(compare(&[words("a"), words("b")], &[words("a")]).is_some());
        assert!(compare(&[words("a")], &[None]).is_some());
        // A source page MuPDF cannot read gives nothing to compare.
        assert_eq!(compare(&[None], &[words("")]), None);
    }

    #[test]
    fn type3_font_names_do_not_carry_object_numbers() {
        assert_eq!(font_key("Type3 (218 0 R)"), "Type3");
        assert_eq!(font_key("Helvetica"), "Helvetica");
        assert_eq!(font_key(""), "");
    }

    #[test]
    fn a_subset_font_matches_its_original_whatever_its_tag_cut_or_spelling() {
        // MuPDF keeps 31 bytes of a name: the subset's tag costs the original's last 7.
        assert_eq!(font_key("Droid Sans Fallback Regular"), font_key("FDWHKA+Droid Sans Fallback Regu"));
        assert_eq!(font_key("NimbusSans-Regular"), font_key("IEZCAN+Nimbus Sans Regular"));
        assert_eq!(font_key("ABCDEF+Helvetica"), "Helvetica");
        assert_ne!(font_key("Droid Sans Fallback Regular"), font_key("FDWHKA+Droid Serif Regular"));
        assert_ne!(font_key("Helvetica"), font_key("Helvetica-Bold"));
        // Cut on a character boundary.
        assert_eq!(font_key("MS ゴシック ＭＳ ゴシック 明朝体"), "MSゴシックＭＳ");
    }

    #[test]
    fn an_unreadable_output_is_a_loss() {
        assert!(lost_content(&[words("a b")], Path::new("/nonexistent/out.pdf")).is_some());
    }
}

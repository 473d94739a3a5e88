//! Page resources that the page's content never names, dropped: compress calls it on the
//! pages whose content was cut short at damaged data or rewritten after a syntax error.
//!
//! A fuzzed or truncated page keeps the resource dictionary of the content it had: on
//! fuzzed-poppler-16-pages.pdf the 16 pages' remaining content names 3 of their 26 fonts,
//! and the other 23 (Type 3 fonts with hundreds of glyph procedures) made the output five
//! times Ghostscript's, which drops them. An entry is dropped only when no name token of
//! the content spells its key (a name used as anything counts as a use), and a page is
//! left alone when its content cannot be lexed through or when a resource it keeps might
//! draw with the page's resources (a form XObject, tiling pattern or Type 3 font without
//! its own /Resources, as old files have). Shared dictionaries are never edited: the page
//! gets a copy of its resources without the unnamed entries, so rendering is unchanged.

use std::collections::HashSet;

use mupdf::pdf::{PdfDocument, PdfObject};

use crate::error::{MuPdfResultExt, Result};
use crate::pdf::content_syntax::{page_content, skip_inline_image};
use crate::pdf::lexer::{Kind, Lexer};

/// Resource categories whose entries content operators name.
const CATEGORIES: &[&str] = &["Font", "XObject", "ExtGState", "ColorSpace", "Pattern", "Shading", "Properties"];

/// Gives `page` its own /Resources without the entries its content never names; returns
/// how many entries were dropped (0 when the page was left alone).
pub(crate) fn drop_unnamed_resources(doc: &PdfDocument, page: &mut PdfObject) -> Result<usize> {
    let Some(content) = page_content(page) else { return Ok(0) };
    let Some(names) = names_in(&content) else { return Ok(0) };
    let Some(resources) = page.get_dict_inheritable("Resources").ctx("reading resources")? else { return Ok(0) };
    let mut pruned = Vec::new();
    let mut dropped = 0;
    for &category in CATEGORIES {
        let Some(dict) = resources.get_dict(category).ctx("reading resources")? else { continue };
        if !dict.is_dict().unwrap_or(false) {
            continue;
        }
        let (mut kept, mut unnamed) = (Vec::new(), 0);
        for i in 0..dict.dict_len().ctx("reading resources")? {
            let Some(key) = dict.get_dict_key(i as i32).ctx("reading resources")? else { continue };
            let Some(value) = dict.get_dict_val(i as i32).ctx("reading resources")? else { continue };
            if !names.contains(key.as_name().ctx("reading resources")?.as_slice()) {
                unnamed += 1;
            } else if draws_with_outer_resources(&value) {
                return Ok(0);
            } else {
                kept.push((key, value));
            }
        }
        if unnamed > 0 {
            dropped += unnamed;
            pruned.push((category, kept));
        }
    }
    if dropped == 0 {
        return Ok(0);
    }
    // New dictionaries (keys are taken as objects: a fuzzed name need not be UTF-8).
    let mut own = resources.copy_dict().ctx("copying resources")?;
    for (category, kept) in pruned {
        let mut dict = doc.new_dict().ctx("copying resources")?;
        for (key, value) in kept {
            dict.dict_put(key, value).ctx("copying resources")?;
        }
        own.dict_put(category, dict).ctx("copying resources")?;
    }
    page.dict_put("Resources", own).ctx("setting resources")?;
    Ok(dropped)
}

/// Every name token of `content`, `#xx` escapes decoded, without the slash; `None` when
/// the content cannot be lexed to its end.
fn names_in(content: &[u8]) -> Option<HashSet<Vec<u8>>> {
    let mut names = HashSet::new();
    let mut lexer = Lexer::new(content);
    while let Some(token) = lexer.next() {
        let token = token.ok()?;
        match token.kind {
            Kind::Name => {
                names.insert(decode_name(&token.text[1..]));
            }
            Kind::Word if token.text == b"ID" => lexer.pos = skip_inline_image(content, lexer.pos)?,
            _ => {}
        }
    }
    Some(names)
}

/// A name's bytes with its `#xx` escapes decoded (a `#` not followed by two hex digits
/// stays as it is).
fn decode_name(raw: &[u8]) -> Vec<u8> {
    let hex = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'#' && i + 2 < raw.len() {
            if let (Some(h), Some(l)) = (hex(raw[i + 1]), hex(raw[i + 2])) {
                out.push(h << 4 | l);
                i += 3;
                continue;
            }
        }
        out.push(raw[i]);
        i += 1;
    }
    out
}

/// True for a resource whose own drawing may use the page's resources: a stream (form
/// XObject, tiling pattern), a Type 3 font or a soft mask's group (in a graphics state)
/// without its own /Resources.
fn draws_with_outer_resources(value: &PdfObject) -> bool {
    let get = |o: &PdfObject, key: &str| o.get_dict(key).ok().flatten();
    let subtype_is =
        |o: &PdfObject, name: &[u8]| get(o, "Subtype").and_then(|s| s.as_name().ok()).is_some_and(|n| n == name);
    if value.is_stream().unwrap_or(false) {
        return !subtype_is(value, b"Image") && get(value, "Resources").is_none();
    }
    if let Some(group) = get(value, "SMask").and_then(|m| get(&m, "G")) {
        if get(&group, "Resources").is_none() {
            return true;
        }
    }
    subtype_is(value, b"Type3") && get(value, "Resources").is_none()
}

#[cfg(test)]
mod tests {
    use super::{decode_name, names_in};

    #[test]
    fn names_are_decoded_and_inline_image_data_is_skipped() {
        let names =
            names_in(b"BT /F1 12 Tf (a) Tj ET /R2b#03#92 gs BI /W 1 /H 1 /CS /Cs1 ID \x2f\x58 EI /Im0 Do").unwrap();
        for n in [&b"F1"[..], b"R2b\x03\x92", b"W", b"H", b"CS", b"Cs1", b"Im0"] {
            assert!(names.contains(n), "{:?}", String::from_utf8_lossy(n));
        }
        assert!(!names.contains(&b"X"[..]), "a slash inside inline image data is no name");
    }

    #[test]
    fn content_that_cannot_be_lexed_names_nothing() {
        assert!(names_in(b"BT /F1 12 Tf (abc Tj ET").is_none());
    }

    #[test]
    fn a_hash_without_two_hex_digits_stays() {
        assert_eq!(decode_name(b"A#2"), b"A#2");
        assert_eq!(decode_name(b"A#zz"), b"A#zz");
        assert_eq!(decode_name(b"A#41"), b"AA");
    }
}

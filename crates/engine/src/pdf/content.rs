//! Page content streams: bounded validation and repair.
//!
//! Page operations copy content streams byte for byte, so a damaged stream in the input
//! (a fuzzed Flate stream, a stray character in ASCIIHex data) would make the output
//! fail `qpdf --check` just like the input. Before writing, each page's content
//! streams are decoded here, in Rust, with a hard output cap and without MuPDF:
//!
//! - decodes cleanly: left untouched (the decoded bytes are thrown away);
//! - decoding fails part-way: the stream is replaced by the part that decoded, which
//!   is what viewers render anyway (MuPDF recompresses it on save);
//! - decodes to more than [`CONTENT_CAP`] bytes, or uses a filter that has no place in a
//!   content stream (image codecs such as JBIG2, DCT, JPX, CCITT, or an unknown one):
//!   `invalid_pdf`. This is how decompression bombs are refused.
//!
//! Images, fonts and other streams are never decoded.

use std::collections::HashSet;
use std::io::Read;

use mupdf::pdf::PdfObject;
use mupdf::Buffer;

use crate::control::JobControl;
use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pdf::object::obj_num;

/// Largest decoded size accepted for one content stream.
pub const CONTENT_CAP: usize = 256 << 20;

enum Decoded {
    Complete,
    /// Decoding failed part-way; holds what decoded before the failure.
    Damaged(Vec<u8>),
}

enum DecodeError {
    TooLarge,
    Unsupported(String),
}

/// Validates (and where needed repairs) the content streams of the given pages, each
/// paired with its 1-based page number (for messages); returns the numbers of the pages
/// whose content was repaired. Advances `control` once per page.
pub(crate) fn repair_page_contents<'a>(
    pages: impl IntoIterator<Item = (usize, &'a PdfObject)>,
    control: &JobControl,
) -> Result<Vec<usize>> {
    let mut seen = HashSet::new();
    let mut repaired = Vec::new();
    for (page_no, page) in pages {
        control.advance()?;
        let Some(contents) = page.get_dict("Contents").ctx("reading page contents")? else {
            continue;
        };
        let streams = if contents.is_array().unwrap_or(false) {
            contents
                .array_iter()
                .ctx("reading page contents")?
                .collect::<std::result::Result<Vec<_>, _>>()
                .ctx("reading page contents")?
        } else {
            vec![contents]
        };
        for mut stream in streams {
            let num = obj_num(&stream);
            if !stream.is_stream().unwrap_or(false) || (num != 0 && !seen.insert(num)) {
                continue;
            }
            match check_stream(&stream) {
                Ok(Decoded::Complete) => {}
                Ok(Decoded::Damaged(prefix)) => {
                    let buf = Buffer::from_bytes(&prefix).ctx("repairing page contents")?;
                    stream.write_stream_buffer(&buf).ctx("repairing page contents")?;
                    if repaired.last() != Some(&page_no) {
                        repaired.push(page_no);
                    }
                }
                Err(DecodeError::TooLarge) => {
                    return Err(EngineError::new(
                        ErrorCode::InvalidPdf,
                        format!(
                            "the content of page {page_no} decodes to more than {} MiB (decompression bomb?)",
                            CONTENT_CAP >> 20
                        ),
                    ))
                }
                Err(DecodeError::Unsupported(filter)) => {
                    return Err(EngineError::new(
                        ErrorCode::InvalidPdf,
                        format!(
                            "the content of page {page_no} uses the filter {filter}, which cannot encode page content"
                        ),
                    ))
                }
            }
        }
    }
    Ok(repaired)
}

fn filter_names(stream: &PdfObject) -> Result<Vec<String>> {
    let Some(filter) = stream.get_dict("Filter").ctx("reading a stream")? else {
        return Ok(Vec::new());
    };
    let items = if filter.is_array().unwrap_or(false) {
        filter
            .array_iter()
            .ctx("reading a stream")?
            .collect::<std::result::Result<Vec<_>, _>>()
            .ctx("reading a stream")?
    } else {
        vec![filter]
    };
    Ok(items.iter().map(|f| String::from_utf8_lossy(&f.as_name().unwrap_or_default()).into_owned()).collect())
}

fn early_change(stream: &PdfObject, index: usize) -> bool {
    let parms = match stream.get_dict("DecodeParms") {
        Ok(Some(p)) if p.is_array().unwrap_or(false) => p.get_array(index as i32).ok().flatten(),
        Ok(p) => p,
        Err(_) => None,
    };
    parms.and_then(|p| p.get_dict("EarlyChange").ok().flatten()).map(|v| v.as_int().unwrap_or(1) != 0).unwrap_or(true)
}

fn check_stream(stream: &PdfObject) -> std::result::Result<Decoded, DecodeError> {
    let filters = filter_names(stream).map_err(|e| DecodeError::Unsupported(e.message))?;
    if filters.is_empty() {
        return Ok(Decoded::Complete);
    }
    // A raw read only de-crypts; its size is bounded by the file.
    let Ok(mut data) = stream.read_raw_stream() else {
        return Ok(Decoded::Damaged(Vec::new()));
    };
    let mut damaged = false;
    for (i, name) in filters.iter().enumerate() {
        let (out, ok) = match name.as_str() {
            "FlateDecode" | "Fl" => flate(&data)?,
            "ASCIIHexDecode" | "AHx" => ascii_hex(&data),
            "ASCII85Decode" | "A85" => ascii85(&data),
            "LZWDecode" | "LZW" => lzw(&data, early_change(stream, i))?,
            "RunLengthDecode" | "RL" => run_length(&data)?,
            other => return Err(DecodeError::Unsupported(other.to_owned())),
        };
        data = out;
        if !ok {
            damaged = true;
            // Later filters see a truncated input; keep decoding what there is.
        }
    }
    Ok(if damaged { Decoded::Damaged(data) } else { Decoded::Complete })
}

fn push_capped(out: &mut Vec<u8>, bytes: &[u8]) -> std::result::Result<(), DecodeError> {
    if out.len() + bytes.len() > CONTENT_CAP {
        return Err(DecodeError::TooLarge);
    }
    out.extend_from_slice(bytes);
    Ok(())
}

/// zlib-wrapped deflate (what PDF specifies), falling back to raw deflate as MuPDF
/// does. Returns the decoded bytes and whether the stream decoded to its end.
fn flate(data: &[u8]) -> std::result::Result<(Vec<u8>, bool), DecodeError> {
    let zlib_header =
        data.len() >= 2 && data[0] & 0x0F == 8 && (u16::from(data[0]) << 8 | u16::from(data[1])) % 31 == 0;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut reader: Box<dyn Read> = if zlib_header {
        Box::new(flate2::read::ZlibDecoder::new(data))
    } else {
        Box::new(flate2::read::DeflateDecoder::new(data))
    };
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok((out, true)),
            Ok(n) => push_capped(&mut out, &buf[..n])?,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Ok((out, false)),
        }
    }
}

/// Whitespace the ASCII filters skip (NUL is not among them for qpdf).
fn is_pdf_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C)
}

fn ascii_hex(data: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(data.len() / 2);
    let mut high: Option<u8> = None;
    for &c in data {
        let v = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            b'>' => {
                if let Some(h) = high {
                    out.push(h << 4);
                }
                return (out, true);
            }
            c if is_pdf_space(c) => continue,
            _ => return (out, false),
        };
        match high.take() {
            Some(h) => out.push(h << 4 | v),
            None => high = Some(v),
        }
    }
    if let Some(h) = high {
        out.push(h << 4);
    }
    (out, true)
}

fn ascii85(data: &[u8]) -> (Vec<u8>, bool) {
    let mut out = Vec::with_capacity(data.len() * 4 / 5);
    let mut group = [0u8; 5];
    let mut n = 0;
    let body = data.strip_prefix(b"<~").unwrap_or(data);
    for (i, &c) in body.iter().enumerate() {
        match c {
            // qpdf, like the spec, wants `~>` exactly.
            b'~' => match body.get(i + 1) {
                Some(b'>') | None => break,
                Some(_) => return (out, false),
            },
            b'z' if n == 0 => out.extend_from_slice(&[0; 4]),
            b'!'..=b'u' => {
                group[n] = c - b'!';
                n += 1;
                if n == 5 {
                    let v = group.iter().fold(0u64, |acc, &d| acc * 85 + u64::from(d));
                    if v > u64::from(u32::MAX) {
                        return (out, false);
                    }
                    out.extend_from_slice(&(v as u32).to_be_bytes());
                    n = 0;
                }
            }
            c if is_pdf_space(c) => {}
            _ => return (out, false),
        }
    }
    if n == 1 {
        return (out, false);
    }
    if n > 1 {
        for slot in group.iter_mut().skip(n) {
            *slot = 84;
        }
        let v = group.iter().fold(0u64, |acc, &d| acc * 85 + u64::from(d));
        if v > u64::from(u32::MAX) {
            return (out, false);
        }
        out.extend_from_slice(&(v as u32).to_be_bytes()[..n - 1]);
    }
    (out, true)
}

fn run_length(data: &[u8]) -> std::result::Result<(Vec<u8>, bool), DecodeError> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let len = data[i];
        i += 1;
        match len {
            128 => return Ok((out, true)),
            0..=127 => {
                let n = len as usize + 1;
                let Some(run) = data.get(i..i + n) else {
                    let rest = data[i..].to_vec();
                    push_capped(&mut out, &rest)?;
                    return Ok((out, false));
                };
                push_capped(&mut out, run)?;
                i += n;
            }
            _ => {
                let Some(&b) = data.get(i) else {
                    return Ok((out, false));
                };
                push_capped(&mut out, &vec![b; 257 - len as usize])?;
                i += 1;
            }
        }
    }
    Ok((out, true))
}

fn lzw(data: &[u8], early_change: bool) -> std::result::Result<(Vec<u8>, bool), DecodeError> {
    const CLEAR: usize = 256;
    const EOD: usize = 257;
    let mut out = Vec::new();
    // Each entry: (prefix code or usize::MAX, last byte, length).
    let mut table: Vec<(usize, u8, usize)> = Vec::with_capacity(4096);
    let reset = |t: &mut Vec<(usize, u8, usize)>| {
        t.clear();
        t.extend((0..256).map(|b| (usize::MAX, b as u8, 1)));
        t.push((usize::MAX, 0, 0));
        t.push((usize::MAX, 0, 0));
    };
    reset(&mut table);
    let mut width = 9;
    let mut prev: Option<usize> = None;
    let (mut acc, mut bits, mut pos) = (0u32, 0u32, 0usize);
    let mut entry = Vec::new();
    loop {
        while bits < width {
            let Some(&b) = data.get(pos) else {
                // Running out without EOD is common and harmless.
                return Ok((out, true));
            };
            acc = acc << 8 | u32::from(b);
            bits += 8;
            pos += 1;
        }
        let code = ((acc >> (bits - width)) & ((1 << width) - 1)) as usize;
        bits -= width;
        match code {
            CLEAR => {
                reset(&mut table);
                width = 9;
                prev = None;
                continue;
            }
            EOD => return Ok((out, true)),
            _ => {}
        }
        let expand = |code: usize, t: &Vec<(usize, u8, usize)>, into: &mut Vec<u8>| {
            into.clear();
            let mut c = code;
            while c != usize::MAX {
                into.push(t[c].1);
                c = t[c].0;
            }
            into.reverse();
        };
        if code < table.len() {
            expand(code, &table, &mut entry);
            if let Some(p) = prev {
                if table.len() < 4096 {
                    let len = table[p].2 + 1;
                    table.push((p, entry[0], len));
                }
            }
        } else if code == table.len() && prev.is_some() {
            let p = prev.unwrap_or_default();
            expand(p, &table, &mut entry);
            let first = entry[0];
            entry.push(first);
            if table.len() < 4096 {
                let len = table[p].2 + 1;
                table.push((p, first, len));
            }
        } else {
            return Ok((out, false));
        }
        push_capped(&mut out, &entry)?;
        prev = Some(code);
        let next = table.len() + usize::from(early_change);
        width = match next {
            n if n >= 2048 => 12,
            n if n >= 1024 => 11,
            n if n >= 512 => 10,
            _ => 9,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_hex_stops_at_eod_and_flags_garbage() {
        assert_eq!(ascii_hex(b"48 65 6C6c6F>"), (b"Hello".to_vec(), true));
        assert_eq!(ascii_hex(b"4865x6C"), (b"He".to_vec(), false));
        assert_eq!(ascii_hex(b"7>"), (vec![0x70], true));
    }

    #[test]
    fn ascii85_round_trips_known_text() {
        assert_eq!(ascii85(b"87cURD]i,\"Ebo7~>"), (b"Hello World".to_vec(), true));
        assert_eq!(ascii85(b"z~>"), (vec![0; 4], true));
        assert!(!ascii85(b"87cU{").1);
    }

    #[test]
    fn flate_detects_truncation_and_caps_output() {
        use std::io::Write;
        let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&b"q 1 0 0 1 0 0 cm Q\n".repeat(1000)).unwrap();
        let full = enc.finish().unwrap();
        let (out, ok) = flate(&full).ok().unwrap();
        assert!(ok && out.len() == 19_000);
        let mut broken = full.clone();
        let mid = broken.len() / 2;
        broken[mid..].iter_mut().for_each(|b| *b = 0xFF);
        let (_, ok) = flate(&broken).ok().unwrap();
        assert!(!ok);
    }

    #[test]
    fn lzw_decodes_the_spec_example() {
        // ISO 32000-1, 7.4.4.2: "-----A---B" with EarlyChange 1.
        let data = [0x80, 0x0B, 0x60, 0x50, 0x22, 0x0C, 0x0C, 0x85, 0x01];
        let (out, ok) = lzw(&data, true).ok().unwrap();
        assert!(ok);
        assert_eq!(out, b"-----A---B");
    }

    #[test]
    fn run_length_expands_runs_and_literals() {
        let (out, ok) = run_length(&[2, b'a', b'b', b'c', 254, b'x', 128]).ok().unwrap();
        assert!(ok);
        assert_eq!(out, b"abcxxx");
    }
}

//! Repacking MuPDF's saved output the way qpdf packs it: the catalog and `/Info` moved
//! into the last object stream, and the cross-reference stream written with fields as
//! narrow as the file needs and the PNG Up predictor.
//!
//! MuPDF's writer keeps the catalog and `/Info` out of object streams (PDF requires that
//! only of linearized files) and writes 6-byte xref rows without a predictor; on small
//! and image-only files those few hundred bytes were what made `light` larger than
//! `qpdf --object-streams=generate`. Only this writer's own output is read: one xref
//! stream at the end, objects in offset order, object streams deflated without
//! predictor. Anything else (encryption, an incremental section, a form this parser does
//! not expect) leaves the file as it is; the caller keeps the repacked file only when
//! it is smaller and MuPDF reopens it with the same page count.
//!
//! The file is read by range and the repacked one written as it is made: only the
//! cross-reference stream, the object stream that grows and the two moved objects are
//! ever in memory, so a compressed output of a few GB costs no more than a small one.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use flate2::Compression;
use mupdf::pdf::PdfDocument;

use crate::pdf::lexer::{Kind, Lexer};

/// A PDF token of the dictionaries read here.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(Vec<u8>),
    Int(i64),
    Open,
    Close,
    DictOpen,
    DictClose,
    /// A string (hex or literal) or any other token, kept as its source bytes.
    Other(Vec<u8>),
}

/// Tokens of `s` (a dictionary's text); `None` on syntax this reader does not handle
/// (a comment, a brace, a syntax error).
fn tokens(s: &[u8]) -> Option<Vec<Tok>> {
    Lexer::new(s)
        .map(|t| {
            let t = t.ok()?;
            Some(match t.kind {
                Kind::Name => Tok::Name(t.text[1..].to_vec()),
                Kind::ArrayOpen => Tok::Open,
                Kind::ArrayClose => Tok::Close,
                Kind::DictOpen => Tok::DictOpen,
                Kind::DictClose => Tok::DictClose,
                Kind::Comment | Kind::BraceOpen | Kind::BraceClose => return None,
                Kind::Word => match std::str::from_utf8(t.text).ok().and_then(|w| w.parse::<i64>().ok()) {
                    Some(n) => Tok::Int(n),
                    None => Tok::Other(t.text.to_vec()),
                },
                Kind::Literal | Kind::Hex => Tok::Other(t.text.to_vec()),
            })
        })
        .collect()
}

/// The top-level entries of a dictionary's tokens: key -> value tokens.
fn dict_entries(toks: &[Tok]) -> Option<HashMap<Vec<u8>, Vec<Tok>>> {
    if toks.first() != Some(&Tok::DictOpen) || toks.last() != Some(&Tok::DictClose) {
        return None;
    }
    let inner = &toks[1..toks.len() - 1];
    let mut map = HashMap::new();
    let mut i = 0;
    while i < inner.len() {
        let Tok::Name(key) = &inner[i] else {
            return None;
        };
        i += 1;
        let start = i;
        let mut depth = 0i32;
        loop {
            match inner.get(i)? {
                Tok::Open | Tok::DictOpen => depth += 1,
                Tok::Close | Tok::DictClose => depth -= 1,
                _ => {}
            }
            i += 1;
            if depth == 0 {
                break;
            }
        }
        // A reference `n g R` is one value.
        if i - start == 1
            && matches!(inner[start], Tok::Int(_))
            && matches!(inner.get(i), Some(Tok::Int(_)))
            && inner.get(i + 1) == Some(&Tok::Other(b"R".to_vec()))
        {
            i += 2;
        }
        map.insert(key.clone(), inner[start..i].to_vec());
    }
    Some(map)
}

fn int(v: Option<&Vec<Tok>>) -> Option<i64> {
    match v.map(Vec::as_slice) {
        Some([Tok::Int(n)]) => Some(*n),
        _ => None,
    }
}

fn reference(v: Option<&Vec<Tok>>) -> Option<i64> {
    match v.map(Vec::as_slice) {
        Some([Tok::Int(n), Tok::Int(0), Tok::Other(r)]) if r == b"R" => Some(*n),
        _ => None,
    }
}

fn ints(v: Option<&Vec<Tok>>) -> Option<Vec<i64>> {
    let v = v?;
    if v.first() != Some(&Tok::Open) || v.last() != Some(&Tok::Close) {
        return None;
    }
    v[1..v.len() - 1]
        .iter()
        .map(|t| match t {
            Tok::Int(n) => Some(*n),
            _ => None,
        })
        .collect()
}

fn is_name(v: Option<&Vec<Tok>>, name: &[u8]) -> bool {
    matches!(v.map(Vec::as_slice), Some([Tok::Name(n)]) if n == name)
}

fn find(hay: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    hay.get(from..)?.windows(needle.len()).position(|w| w == needle).map(|p| p + from)
}

/// The bytes of the file being repacked, read by range: the file on disk (positional
/// reads), or a slice in memory (tests).
trait Source {
    fn len(&self) -> usize;
    /// Bytes `from..to`, or `None` past the end or on a read error.
    fn range(&self, from: usize, to: usize) -> Option<Cow<'_, [u8]>>;
    /// Copies bytes `from..to` to `out`, a piece at a time.
    fn copy_to(&self, from: usize, to: usize, out: &mut dyn Write) -> Option<()> {
        const PIECE: usize = 1 << 20;
        let mut at = from;
        while at < to {
            let next = to.min(at + PIECE);
            out.write_all(&self.range(at, next)?).ok()?;
            at = next;
        }
        Some(())
    }
}

impl Source for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn range(&self, from: usize, to: usize) -> Option<Cow<'_, [u8]>> {
        self.get(from..to).map(Cow::Borrowed)
    }
}

struct FileSource {
    file: File,
    len: usize,
}

impl Source for FileSource {
    fn len(&self) -> usize {
        self.len
    }
    fn range(&self, from: usize, to: usize) -> Option<Cow<'_, [u8]>> {
        if from > to || to > self.len {
            return None;
        }
        let mut buf = vec![0; to - from];
        self.file.read_exact_at(&mut buf, from as u64).ok()?;
        Some(Cow::Owned(buf))
    }
}

/// Counts the bytes written: the offsets of the cross-reference stream.
struct Counted<'a> {
    out: &'a mut dyn Write,
    n: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.out.write(buf)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// An indirect object of the file: its dictionary entries and, for a stream, its data.
struct Obj<'a> {
    num: i64,
    /// Text between `obj` and `endobj` (or `stream`).
    body: &'a [u8],
    dict: Option<HashMap<Vec<u8>, Vec<Tok>>>,
    stream: Option<&'a [u8]>,
}

fn object_at(file: &[u8], ofs: usize) -> Option<Obj<'_>> {
    let head_end = find(file, b"obj", ofs)?;
    let head = std::str::from_utf8(&file[ofs..head_end]).ok()?;
    let mut parts = head.split_ascii_whitespace();
    let num = parts.next()?.parse().ok()?;
    if parts.next()? != "0" || parts.next().is_some() {
        return None;
    }
    let start = head_end + 3;
    let end = find(file, b"endobj", start)?;
    // The keyword follows the dictionary's `>>` and ends its line (a string of the
    // dictionary may contain the word).
    let mut stream_kw = None;
    let mut from = start;
    while let Some(k) = find(&file[..end], b"stream", from) {
        if file[start..k].trim_ascii_end().ends_with(b">>") && matches!(file.get(k + 6), Some(b'\r' | b'\n')) {
            stream_kw = Some(k);
            break;
        }
        from = k + 6;
    }
    let body_end = stream_kw.unwrap_or(end);
    let body = file[start..body_end].trim_ascii();
    let dict = tokens(body).and_then(|t| dict_entries(&t));
    let stream = match stream_kw {
        Some(kw) => {
            let len = int(dict.as_ref()?.get(b"Length".as_slice()))? as usize;
            let mut data = kw + 6;
            if file.get(data) == Some(&b'\r') {
                data += 1;
            }
            if file.get(data) != Some(&b'\n') {
                return None;
            }
            data += 1;
            Some(file.get(data..data + len)?)
        }
        None => None,
    };
    Some(Obj { num, body, dict, stream })
}

fn inflate(data: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    ZlibDecoder::new(data).read_to_end(&mut out).ok()?;
    Some(out)
}

fn deflate(data: &[u8]) -> Vec<u8> {
    let mut enc = ZlibEncoder::new(Vec::new(), Compression::best());
    enc.write_all(data).expect("writing to memory");
    enc.finish().expect("writing to memory")
}

fn bytes_for(max: u64) -> usize {
    (1..=8).find(|&n| n == 8 || max < 1u64 << (8 * n)).unwrap_or(8)
}

/// Repacks the PDF at `path` in place when that makes it smaller and MuPDF reads the
/// result with `pages` pages; otherwise leaves it as it is.
pub(crate) fn repack_file(path: &Path, pages: usize) {
    let Some(source) =
        File::open(path).ok().and_then(|file| Some(FileSource { len: file.metadata().ok()?.len() as usize, file }))
    else {
        return;
    };
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".repack");
    let tmp = PathBuf::from(tmp);
    let written = File::create(&tmp).ok().and_then(|f| {
        let mut w = BufWriter::with_capacity(1 << 20, f);
        let n = repack(&source, &mut w)?;
        w.flush().ok()?;
        Some(n)
    });
    let readable = written.is_some_and(|n| n < source.len as u64)
        && tmp.to_str().is_some_and(|p| {
            PdfDocument::open(p).is_ok_and(|d| {
                d.page_count().is_ok_and(|n| n as usize == pages)
                    && d.catalog().is_ok_and(|c| c.get_dict("Pages").is_ok_and(|p| p.is_some()))
            })
        });
    if !(readable && std::fs::rename(&tmp, path).is_ok()) {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Writes the repacked file to `out` and returns its size, or `None` when `file` is not in
/// the form this reads (then `out` may hold part of it).
fn repack(file: &(impl Source + ?Sized), out: &mut dyn Write) -> Option<u64> {
    let len = file.len();
    let tail = file.range(len.saturating_sub(1024), len)?;
    let sx = tail.windows(9).rposition(|w| w == b"startxref")?;
    let xref_ofs: usize =
        std::str::from_utf8(tail.get(sx + 9..)?).ok()?.split_ascii_whitespace().next()?.parse().ok()?;
    let xref_bytes = file.range(xref_ofs, len)?;
    let xref = object_at(&xref_bytes, 0)?;
    let xd = xref.dict.as_ref()?;
    if !is_name(xd.get(b"Type".as_slice()), b"XRef")
        || !is_name(xd.get(b"Filter".as_slice()), b"FlateDecode")
        || ["DecodeParms", "Prev", "Encrypt"].iter().any(|k| xd.contains_key(k.as_bytes()))
    {
        return None;
    }
    let w = ints(xd.get(b"W".as_slice()))?;
    let size = int(xd.get(b"Size".as_slice()))?;
    let index = match xd.get(b"Index".as_slice()) {
        Some(_) => ints(xd.get(b"Index".as_slice()))?,
        None => vec![0, size],
    };
    let root = reference(xd.get(b"Root".as_slice()))?;
    let info = reference(xd.get(b"Info".as_slice()));
    let id = xd.get(b"ID".as_slice());
    if w.len() != 3 || w.iter().any(|&x| !(0..=8).contains(&x)) || index.len() % 2 != 0 {
        return None;
    }
    let (w0, w1, w2) = (w[0] as usize, w[1] as usize, w[2] as usize);
    let rows = inflate(xref.stream?)?;
    let row_len = w0 + w1 + w2;
    let field = |row: &[u8], from: usize, n: usize| row[from..from + n].iter().fold(0u64, |a, &b| (a << 8) | b as u64);
    // (object number, type, field 2, field 3) in the stream's order.
    let mut entries = Vec::new();
    let mut r = 0;
    for pair in index.chunks(2) {
        for num in pair[0]..pair[0] + pair[1] {
            let row = rows.get(r * row_len..(r + 1) * row_len)?;
            let t = if w0 == 0 { 1 } else { field(row, 0, w0) };
            entries.push((num, t, field(row, w0, w1), field(row, w0 + w1, w2)));
            r += 1;
        }
    }
    // Objects stored at an offset, in file order (the xref stream last).
    let mut placed: Vec<(usize, i64)> =
        entries.iter().filter(|e| e.1 == 1 && e.0 != xref.num).map(|e| (e.2 as usize, e.0)).collect();
    placed.sort();
    if placed.iter().any(|&(o, _)| o >= xref_ofs) {
        return None;
    }
    let gen_of: HashMap<i64, u64> = entries.iter().filter(|e| e.1 == 1).map(|e| (e.0, e.3)).collect();
    let end_of = |k: usize| placed.get(k + 1).map_or(xref_ofs, |p| p.0);
    // The object stream the catalog and /Info join: the last one in the file. An object
    // whose first bytes do not name the type is not read whole (images can be large).
    let objstm_bytes = (0..placed.len()).rev().find_map(|k| {
        let (o, end) = (placed[k].0, end_of(k));
        find(&file.range(o, end.min(o + 512))?, b"/ObjStm", 0)?;
        let bytes = file.range(o, end)?;
        let obj = object_at(&bytes, 0)?;
        is_name(obj.dict.as_ref()?.get(b"Type".as_slice()), b"ObjStm").then_some(())?;
        Some(bytes)
    })?;
    let objstm = object_at(&objstm_bytes, 0)?;
    let od = objstm.dict.as_ref()?;
    if !is_name(od.get(b"Filter".as_slice()), b"FlateDecode")
        || od.contains_key(b"DecodeParms".as_slice())
        || od.contains_key(b"Extends".as_slice())
    {
        return None;
    }
    let n = int(od.get(b"N".as_slice()))? as usize;
    let first = int(od.get(b"First".as_slice()))? as usize;
    let data = inflate(objstm.stream?)?;
    let header: Vec<i64> = std::str::from_utf8(data.get(..first)?)
        .ok()?
        .split_ascii_whitespace()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    if header.len() != 2 * n {
        return None;
    }
    let mut members: Vec<(i64, Vec<u8>)> = (0..n)
        .map(|k| {
            let from = first + header[2 * k + 1] as usize;
            let to = if k + 1 < n { first + header[2 * k + 3] as usize } else { data.len() };
            Some((header[2 * k], data.get(from..to)?.to_vec()))
        })
        .collect::<Option<_>>()?;
    let mut moved = Vec::new();
    for num in std::iter::once(root).chain(info) {
        if gen_of.get(&num) != Some(&0) {
            continue;
        }
        let k = placed.iter().position(|p| p.1 == num)?;
        let bytes = file.range(placed[k].0, end_of(k))?;
        let obj = object_at(&bytes, 0)?;
        if obj.stream.is_some() || obj.dict.is_none() || obj.num != num {
            return None;
        }
        let mut body = obj.body.to_vec();
        body.push(b'\n');
        members.push((num, body));
        moved.push(num);
    }
    // The extended object stream.
    let mut head = String::new();
    let mut pos = 0;
    for (num, body) in &members {
        head.push_str(&format!("{num} {pos} "));
        pos += body.len();
    }
    let mut content = head.clone().into_bytes();
    for (_, body) in &members {
        content.extend_from_slice(body);
    }
    let packed = deflate(&content);
    let mut new_objstm = format!(
        "{} 0 obj\n<</Type/ObjStm/N {}/First {}/Filter/FlateDecode/Length {}>>\nstream\n",
        objstm.num,
        members.len(),
        head.len(),
        packed.len()
    )
    .into_bytes();
    new_objstm.extend_from_slice(&packed);
    new_objstm.extend_from_slice(b"\nendstream\nendobj\n");

    // The file: everything before the first object as it is, then the objects in
    // their order with their new offsets.
    let mut out = Counted { out, n: 0 };
    file.copy_to(0, placed.first().map_or(xref_ofs, |p| p.0), &mut out)?;
    let mut new_ofs: HashMap<i64, u64> = HashMap::new();
    for (k, &(ofs, num)) in placed.iter().enumerate() {
        if moved.contains(&num) {
            continue;
        }
        new_ofs.insert(num, out.n);
        if num == objstm.num {
            out.write_all(&new_objstm).ok()?;
        } else {
            file.copy_to(ofs, end_of(k), &mut out)?;
        }
    }
    let new_xref_ofs = out.n;
    new_ofs.insert(xref.num, new_xref_ofs);
    let index_in_stm: HashMap<i64, u64> = members.iter().enumerate().map(|(k, m)| (m.0, k as u64)).collect();
    let rows: Vec<(u64, u64, u64)> = entries
        .iter()
        .map(|&(num, t, f2, f3)| {
            if moved.contains(&num) {
                (2, objstm.num as u64, index_in_stm[&num])
            } else if t == 1 {
                (1, new_ofs.get(&num).copied().unwrap_or(f2), f3)
            } else {
                (t, f2, f3)
            }
        })
        .collect();
    let n1 = bytes_for(rows.iter().map(|r| r.1).max().unwrap_or(0));
    let n2 = bytes_for(rows.iter().map(|r| r.2).max().unwrap_or(0)).max(1);
    let cols = 1 + n1 + n2;
    let mut raw = Vec::with_capacity(rows.len() * (cols + 1));
    let mut prev = vec![0u8; cols];
    for &(t, f2, f3) in &rows {
        let mut row = vec![t as u8];
        row.extend_from_slice(&f2.to_be_bytes()[8 - n1..]);
        row.extend_from_slice(&f3.to_be_bytes()[8 - n2..]);
        // PNG Up: each byte minus the one above it.
        raw.push(2);
        raw.extend(row.iter().zip(&prev).map(|(a, b)| a.wrapping_sub(*b)));
        prev = row;
    }
    let packed = deflate(&raw);
    let index_text = if index == [0, size] {
        String::new()
    } else {
        format!("/Index[{}]", index.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(" "))
    };
    let info_text = info.map_or(String::new(), |i| format!("/Info {i} 0 R"));
    let mut dict =
        format!("{} 0 obj\n<</Type/XRef/Size {size}/W[1 {n1} {n2}]{index_text}/Root {root} 0 R{info_text}", xref.num)
            .into_bytes();
    if let Some(id) = id {
        dict.extend_from_slice(b"/ID");
        for t in id {
            match t {
                Tok::Open => dict.push(b'['),
                Tok::Close => dict.push(b']'),
                Tok::Other(s) => dict.extend_from_slice(s),
                _ => return None,
            }
        }
    }
    dict.extend_from_slice(
        format!("/Filter/FlateDecode/DecodeParms<</Columns {cols}/Predictor 12>>/Length {}>>\nstream\n", packed.len())
            .as_bytes(),
    );
    out.write_all(&dict).ok()?;
    out.write_all(&packed).ok()?;
    out.write_all(format!("\nendstream\nendobj\nstartxref\n{new_xref_ofs}\n%%EOF\n").as_bytes()).ok()?;
    Some(out.n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_widths_fit_the_largest_value() {
        assert_eq!(bytes_for(0), 1);
        assert_eq!(bytes_for(255), 1);
        assert_eq!(bytes_for(256), 2);
        assert_eq!(bytes_for(70_000), 3);
    }

    #[test]
    fn references_and_arrays_are_single_values_of_a_dictionary() {
        let t = tokens(b"<</Type/XRef/Root 9 0 R/W[1 4 1]/ID[<AB><CD>]/Size 17/P (a\\) (b) c)>>").unwrap();
        let d = dict_entries(&t).unwrap();
        assert_eq!(reference(d.get(b"Root".as_slice())), Some(9));
        assert_eq!(ints(d.get(b"W".as_slice())), Some(vec![1, 4, 1]));
        assert_eq!(int(d.get(b"Size".as_slice())), Some(17));
        assert!(is_name(d.get(b"Type".as_slice()), b"XRef"));
        assert_eq!(d.get(b"P".as_slice()), Some(&vec![Tok::Other(b"(a\\) (b) c)".to_vec())]));
    }
}

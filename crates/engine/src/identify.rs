//! Type sniffing and page counting from the bytes alone (the file name is never used).
//!
//! # Rules
//!
//! | kind | decided by | `pageCount` |
//! |---|---|---|
//! | `pdf` | `%PDF-` within the first 1024 bytes, then MuPDF must open it | MuPDF's page count |
//! | `jpeg` | `FF D8 FF` | 1 |
//! | `png` | the 8-byte PNG signature | 1 |
//! | `webp` | `RIFF....WEBP` | 1 |
//! | `docx` | ZIP with `[Content_Types].xml` and `word/document.xml` (or the package's `officeDocument` relationship pointing into `word/`) | `<Pages>` from `docProps/app.xml` when present and > 0, else 1 |
//! | `xlsx` | ZIP with `[Content_Types].xml` and `xl/workbook.xml` (or the relationship pointing into `xl/`) | number of `<sheet>` entries in the workbook (worksheets and chart sheets), at least 1 |
//! | `xlsx`, `encrypted: true` | OLE/CFB container (`D0 CF 11 E0 A1 B1 1A E1`) holding a stream named `EncryptedPackage` (an Office-encrypted OOXML file; the container does not say whether it is a workbook or a document, so it is reported as `xlsx`) | `null` |
//! | `csv` | valid UTF-8 (a BOM is allowed), no NUL, no control characters other than tab, CR, LF, FF and SUB, at least one non-blank line | ceil(non-blank lines / 50), at least 1 |
//! | `unknown` | anything else: TIFF, legacy `.doc`/`.xls`, ZIPs that are neither DOCX nor XLSX, binary data, empty files | `null` |
//!
//! Lines for the CSV count are physical lines (a quoted field spanning two lines counts
//! twice); a blank line contains only whitespace.
//!
//! A file that looks like a PDF (`%PDF-` in the first 1024 bytes) but that MuPDF cannot
//! open, or that has no pages, is reported as kind `pdf` with `error: "invalid_pdf"` and
//! `pageCount: null`, so the server can answer 422 rather than 415.
//!
//! `encrypted` is true for every PDF with an `/Encrypt` dictionary; `password_required`
//! says whether it needs a password to open (owner-password-only PDFs do not). For a PDF
//! that needs a password the page count is still read when MuPDF can do so without it
//! (the page tree is not encrypted), else it is `null`.
//!
//! # Bounds
//!
//! Only the first 1024 bytes decide the kind. A CSV is validated and counted by streaming
//! it in 64 KiB chunks; ZIP members are read through a size cap; an OLE container is
//! scanned in chunks. No input is ever loaded whole except a PDF opened by MuPDF.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::{EngineError, ErrorCode, Result};
use crate::pdf::open::{count_pages, open_document, OpenOutcome, Source};

/// Document kinds the service accepts, plus `Unknown`; serialized as [`Kind::as_str`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// PDF
    Pdf,
    /// Office Open XML word-processing document
    Docx,
    /// Office Open XML workbook
    Xlsx,
    /// UTF-8 comma-separated (or any delimited) text
    Csv,
    /// JPEG image
    Jpeg,
    /// PNG image
    Png,
    /// WebP image
    Webp,
    /// anything else
    Unknown,
}

impl Kind {
    /// The wire form, e.g. `"pdf"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Pdf => "pdf",
            Kind::Docx => "docx",
            Kind::Xlsx => "xlsx",
            Kind::Csv => "csv",
            Kind::Jpeg => "jpeg",
            Kind::Png => "png",
            Kind::Webp => "webp",
            Kind::Unknown => "unknown",
        }
    }
}

/// What [`identify`] found.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Identification {
    /// Detected kind.
    pub kind: Kind,
    /// Page count by the rules in the module documentation; `None` when unknown.
    pub page_count: Option<u32>,
    /// The file is encrypted (PDF `/Encrypt`, or an Office `EncryptedPackage`).
    pub encrypted: bool,
    /// A password is needed to open it (PDF user password, or any encrypted Office file).
    pub password_required: bool,
    /// An error code when the kind is recognised but the file is unusable
    /// (only `invalid_pdf`); left out of the serialized form when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorCode>,
}

impl Identification {
    fn simple(kind: Kind, page_count: Option<u32>) -> Self {
        Self { kind, page_count, encrypted: false, password_required: false, error: None }
    }
}

const HEAD_LEN: usize = 1024;
const CSV_LINES_PER_PAGE: u64 = 50;
/// Caps on decompressed ZIP members we read: far above real metadata, far below harm.
const APP_XML_CAP: u64 = 1 << 20;
const WORKBOOK_XML_CAP: u64 = 32 << 20;
const RELS_CAP: u64 = 1 << 20;

/// Identifies the file at `path` from its bytes. Fails only on I/O errors.
pub fn identify(path: &Path) -> Result<Identification> {
    let mut file = File::open(path).map_err(|e| EngineError::io("opening the input", e))?;
    let mut head = Vec::with_capacity(HEAD_LEN);
    (&mut file).take(HEAD_LEN as u64).read_to_end(&mut head).map_err(|e| EngineError::io("reading the input", e))?;

    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Ok(Identification::simple(Kind::Jpeg, Some(1)));
    }
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Ok(Identification::simple(Kind::Png, Some(1)));
    }
    if head.len() >= 12 && &head[0..4] == b"RIFF" && &head[8..12] == b"WEBP" {
        return Ok(Identification::simple(Kind::Webp, Some(1)));
    }
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Ok(identify_zip(file));
    }
    if head.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
        return identify_cfb(file);
    }
    // After the formats with a fixed signature at offset 0, so that a JPEG or ZIP that
    // happens to carry "%PDF-" in its first kilobyte is not taken for a PDF.
    if memfind(&head, b"%PDF-").is_some() {
        drop(file);
        return Ok(identify_pdf(path));
    }
    file.seek(SeekFrom::Start(0)).map_err(|e| EngineError::io("reading the input", e))?;
    match count_csv_lines(file).map_err(|e| EngineError::io("reading the input", e))? {
        Some(lines) if lines > 0 => {
            let pages = lines.div_ceil(CSV_LINES_PER_PAGE).max(1);
            Ok(Identification::simple(Kind::Csv, Some(u32::try_from(pages).unwrap_or(u32::MAX))))
        }
        _ => Ok(Identification::simple(Kind::Unknown, None)),
    }
}

fn identify_pdf(path: &Path) -> Identification {
    let mut id = Identification::simple(Kind::Pdf, None);
    match open_document(Source::Path(path)) {
        Err(_) => id.error = Some(ErrorCode::InvalidPdf),
        Ok(OpenOutcome { doc, encrypted, password_required }) => {
            id.encrypted = encrypted;
            id.password_required = password_required;
            match doc.page_count() {
                Ok(n) if n > 0 => id.page_count = u32::try_from(n).ok(),
                // A locked document may refuse to count; that is not a broken file.
                _ if password_required => {}
                _ => match count_pages(&doc) {
                    Some(n) => id.page_count = u32::try_from(n).ok(),
                    None => id.error = Some(ErrorCode::InvalidPdf),
                },
            }
        }
    }
    id
}

fn identify_zip(file: File) -> Identification {
    let unknown = Identification::simple(Kind::Unknown, None);
    let Ok(mut zip) = zip::ZipArchive::new(file) else {
        return unknown;
    };
    let names: Vec<String> = zip.file_names().filter_map(|n| n.ok().map(|n| n.into_owned())).collect();
    // OPC part names are case-insensitive.
    let find = |wanted: &str| names.iter().find(|n| n.eq_ignore_ascii_case(wanted)).cloned();
    if find("[Content_Types].xml").is_none() {
        return unknown;
    }
    let kind = if find("word/document.xml").is_some() {
        Kind::Docx
    } else if find("xl/workbook.xml").is_some() {
        Kind::Xlsx
    } else {
        match find("_rels/.rels").and_then(|n| read_member(&mut zip, &n, RELS_CAP)) {
            Some(rels) => match office_document_target(&rels) {
                Some(t) if t.starts_with("word/") => Kind::Docx,
                Some(t) if t.starts_with("xl/") => Kind::Xlsx,
                _ => return unknown,
            },
            None => return unknown,
        }
    };
    let pages = match kind {
        Kind::Docx => find("docProps/app.xml")
            .and_then(|n| read_member(&mut zip, &n, APP_XML_CAP))
            .and_then(|xml| element_text(&xml, "Pages"))
            .and_then(|t| t.trim().parse::<u32>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(1),
        _ => {
            let workbook = find("xl/workbook.xml").or_else(|| {
                find("_rels/.rels")
                    .and_then(|n| read_member(&mut zip, &n, RELS_CAP))
                    .and_then(|r| office_document_target(&r))
            });
            workbook
                .and_then(|n| read_member(&mut zip, &n, WORKBOOK_XML_CAP))
                .map(|xml| count_elements(&xml, "sheet"))
                .unwrap_or(0)
                .max(1)
        }
    };
    Identification::simple(kind, Some(pages))
}

/// Reads one ZIP member as (lossy) UTF-8, at most `cap` decompressed bytes.
fn read_member(zip: &mut zip::ZipArchive<File>, name: &str, cap: u64) -> Option<String> {
    let member = zip.by_name(name).ok()?;
    let mut buf = Vec::new();
    member.take(cap).read_to_end(&mut buf).ok()?;
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// The target of the package relationship whose type ends in `/officeDocument`,
/// normalised to a part name without a leading slash.
fn office_document_target(rels: &str) -> Option<String> {
    for tag in rels.split('<').skip(1) {
        let name_end = tag.find(|c: char| c.is_whitespace() || c == '/' || c == '>').unwrap_or(tag.len());
        if !local_name(&tag[..name_end]).eq("Relationship") {
            continue;
        }
        let ty = attribute(tag, "Type")?;
        if ty.ends_with("/officeDocument") {
            return attribute(tag, "Target").map(|t| t.trim_start_matches('/').to_owned());
        }
    }
    None
}

fn attribute<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let mut rest = tag;
    while let Some(pos) = rest.find(name) {
        let before_ok = pos == 0 || rest.as_bytes()[pos - 1].is_ascii_whitespace();
        let after = rest[pos + name.len()..].trim_start();
        if before_ok {
            if let Some(after_eq) = after.strip_prefix('=') {
                let after_eq = after_eq.trim_start();
                let quote = after_eq.chars().next()?;
                if quote == '"' || quote == '\'' {
                    let value = &after_eq[1..];
                    return value.find(quote).map(|end| &value[..end]);
                }
            }
        }
        rest = &rest[pos + name.len()..];
    }
    None
}

fn local_name(qname: &str) -> &str {
    qname.rsplit(':').next().unwrap_or(qname)
}

/// Text content of the first element with this local name (namespace prefixes ignored).
fn element_text(xml: &str, local: &str) -> Option<String> {
    let mut rest = xml;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let name_end = rest.find(|c: char| c.is_whitespace() || c == '/' || c == '>').unwrap_or(rest.len());
        let name = &rest[..name_end];
        if local_name(name) == local && !name.starts_with('/') {
            let gt = rest.find('>')?;
            if rest[..gt].ends_with('/') {
                return Some(String::new());
            }
            let body = &rest[gt + 1..];
            let end = body.find('<').unwrap_or(body.len());
            return Some(body[..end].to_owned());
        }
    }
    None
}

/// Counts start tags with this local name (`<sheet`, `<x:sheet`), not `<sheets>`.
fn count_elements(xml: &str, local: &str) -> u32 {
    let mut count = 0u32;
    let mut rest = xml;
    while let Some(lt) = rest.find('<') {
        rest = &rest[lt + 1..];
        let name_end = rest.find(|c: char| c.is_whitespace() || c == '/' || c == '>').unwrap_or(rest.len());
        let name = &rest[..name_end];
        if !name.starts_with(['/', '?', '!']) && local_name(name) == local {
            count = count.saturating_add(1);
        }
    }
    count
}

/// Office encrypts OOXML by wrapping it in a CFB container with an `EncryptedPackage`
/// stream; its directory entry name is UTF-16LE. Scanning for the name in chunks avoids
/// parsing the container and reads the file once at most.
fn identify_cfb(mut file: File) -> Result<Identification> {
    let needle: Vec<u8> = "EncryptedPackage".encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
    file.seek(SeekFrom::Start(0)).map_err(|e| EngineError::io("reading the input", e))?;
    let found = stream_contains(&mut file, &needle).map_err(|e| EngineError::io("reading the input", e))?;
    if found {
        Ok(Identification { kind: Kind::Xlsx, page_count: None, encrypted: true, password_required: true, error: None })
    } else {
        Ok(Identification::simple(Kind::Unknown, None))
    }
}

fn stream_contains(reader: &mut impl Read, needle: &[u8]) -> io::Result<bool> {
    let mut buf = vec![0u8; 64 * 1024 + needle.len()];
    let mut carried = 0usize;
    loop {
        let n = read_some(reader, &mut buf[carried..])?;
        if n == 0 {
            return Ok(false);
        }
        let filled = carried + n;
        if memfind(&buf[..filled], needle).is_some() {
            return Ok(true);
        }
        let keep = needle.len().saturating_sub(1).min(filled);
        buf.copy_within(filled - keep..filled, 0);
        carried = keep;
    }
}

fn read_some(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        match reader.read(buf) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

fn memfind(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || haystack.len() < needle.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Streams the file: `Some(non-blank line count)` when it is CSV-like text, `None` when
/// not (invalid UTF-8, NUL or other binary control characters).
fn count_csv_lines(mut reader: impl Read) -> io::Result<Option<u64>> {
    let mut buf = vec![0u8; 64 * 1024];
    // Up to 3 bytes of a UTF-8 sequence split across chunk boundaries.
    let mut pending: Vec<u8> = Vec::with_capacity(4);
    let mut first = true;
    let mut lines = 0u64;
    let mut line_has_content = false;
    loop {
        let n = read_some(&mut reader, &mut buf)?;
        if n == 0 {
            break;
        }
        let mut chunk: &[u8] = &buf[..n];
        let joined;
        if !pending.is_empty() {
            let mut j = std::mem::take(&mut pending);
            j.extend_from_slice(chunk);
            joined = j;
            chunk = &joined;
        }
        if first {
            first = false;
            chunk = chunk.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(chunk);
        }
        let valid_len = match std::str::from_utf8(chunk) {
            Ok(_) => chunk.len(),
            // An incomplete sequence at the very end may complete in the next chunk.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => return Ok(None),
        };
        for &b in &chunk[..valid_len] {
            match b {
                b'\n' => {
                    if line_has_content {
                        lines += 1;
                    }
                    line_has_content = false;
                }
                b'\t' | b'\r' | b' ' | 0x0C => {}
                0x1A => {}
                0x00..=0x1F | 0x7F => return Ok(None),
                _ => line_has_content = true,
            }
        }
        pending.extend_from_slice(&chunk[valid_len..]);
    }
    if !pending.is_empty() {
        return Ok(None);
    }
    if line_has_content {
        lines += 1;
    }
    Ok(Some(lines))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_counts_non_blank_physical_lines_across_chunk_boundaries() {
        let mut text = String::from("\u{feff}a,b\n\n  \r\n");
        for i in 0..10_000 {
            text.push_str(&format!("{i},ä€😀\r\n"));
        }
        assert_eq!(count_csv_lines(text.as_bytes()).unwrap(), Some(10_001));
    }

    #[test]
    fn csv_rejects_nul_and_invalid_utf8() {
        assert_eq!(count_csv_lines(&b"a,b\0\n"[..]).unwrap(), None);
        assert_eq!(count_csv_lines(&b"a,\xff\n"[..]).unwrap(), None);
        assert_eq!(count_csv_lines(&b"a,\xc3"[..]).unwrap(), None);
    }

    #[test]
    fn xlsx_sheet_count_ignores_the_sheets_container() {
        let xml = r#"<workbook><sheets><sheet name="a"/><x:sheet name="b"/></sheets></workbook>"#;
        assert_eq!(count_elements(xml, "sheet"), 2);
    }

    #[test]
    fn docx_pages_element_text_is_found() {
        let xml = r#"<Properties><Template>x</Template><Pages>7</Pages></Properties>"#;
        assert_eq!(element_text(xml, "Pages").as_deref(), Some("7"));
    }

    #[test]
    fn office_document_relationship_target_is_read() {
        let rels = r#"<Relationships><Relationship Id="rId1" Type="http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument" Target="/word/document2.xml"/></Relationships>"#;
        assert_eq!(office_document_target(rels).as_deref(), Some("word/document2.xml"));
    }
}

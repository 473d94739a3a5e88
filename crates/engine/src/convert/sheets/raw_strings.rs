//! Text cells whose whitespace at the ends calamine drops.
//!
//! calamine trims spaces, tabs and line breaks at both ends of every `<t>` element that has
//! no `xml:space="preserve"`. Excel always writes that attribute when it matters, but other
//! writers (Gnumeric, some libraries) do not, and Excel and LibreOffice keep the text exactly
//! as stored (`<t>City </t>` is `City `). This pass reads the sheet's XML and the shared
//! strings once more and returns the exact text of the cells where trimming changed
//! something; every other cell keeps calamine's value.

use std::collections::HashMap;
use std::io::{BufReader, Read, Seek};

use quick_xml::events::Event;
use quick_xml::{Reader, XmlVersion};
use zip::ZipArchive;

const TRIMMED: [char; 4] = [' ', '\t', '\r', '\n'];

/// (row, column), 0-based -> exact text, for the text cells of sheet `index` (workbook order)
/// that calamine trims. Any problem reading the package gives an empty map (calamine's values
/// are then used as they are).
pub fn untrimmed_cells<R: Read + Seek>(reader: R, index: usize) -> HashMap<(u32, u32), String> {
    read(reader, index).unwrap_or_default()
}

fn read<R: Read + Seek>(reader: R, index: usize) -> Option<HashMap<(u32, u32), String>> {
    let mut zip = ZipArchive::new(reader).ok()?;
    let workbook = rel_targets(&mut zip, "_rels/.rels", "")?
        .into_iter()
        .find(|(_, ty, _)| ty.ends_with("/officeDocument"))
        .map(|(_, _, target)| target)
        .unwrap_or_else(|| "xl/workbook.xml".to_owned());
    let dir = workbook.rsplit_once('/').map_or("", |(d, _)| d).to_owned();
    let rels_path = format!("{}_rels/{}.rels", prefix(&dir), workbook.rsplit('/').next()?);
    let rels = rel_targets(&mut zip, &rels_path, &dir)?;
    let sheet_ids = sheet_rel_ids(&mut zip, &workbook)?;
    let sheet_id = sheet_ids.get(index)?;
    let sheet_path = rels.iter().find(|(id, _, _)| id == sheet_id).map(|(_, _, t)| t.clone())?;
    let shared_path = rels.iter().find(|(_, ty, _)| ty.ends_with("/sharedStrings")).map(|(_, _, t)| t.clone());
    let shared = match shared_path {
        Some(p) => shared_strings(&mut zip, &p).unwrap_or_default(),
        None => HashMap::new(),
    };
    sheet_cells(&mut zip, &sheet_path, &shared)
}

fn prefix(dir: &str) -> String {
    if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    }
}

fn open<'a, R: Read + Seek>(
    zip: &'a mut ZipArchive<R>,
    path: &str,
) -> Option<Reader<BufReader<zip::read::ZipFile<'a, R>>>> {
    let file = zip.by_name(path.trim_start_matches('/')).ok()?;
    Some(Reader::from_reader(BufReader::new(file)))
}

/// (Id, Type, Target resolved against `dir`) of a relationships part.
fn rel_targets<R: Read + Seek>(
    zip: &mut ZipArchive<R>,
    path: &str,
    dir: &str,
) -> Option<Vec<(String, String, String)>> {
    let mut xml = open(zip, path)?;
    let mut buf = Vec::new();
    let mut out = Vec::new();
    loop {
        match xml.read_event_into(&mut buf).ok()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "Relationship" => {
                let (mut id, mut ty, mut target) = (String::new(), String::new(), String::new());
                for a in e.attributes().flatten() {
                    let v = a.normalized_value(XmlVersion::Implicit1_0).ok()?.into_owned();
                    match a.key.local_name().as_ref() {
                        "Id" => id = v,
                        "Type" => ty = v,
                        "Target" => target = v,
                        _ => {}
                    }
                }
                let target = match target.strip_prefix('/') {
                    Some(abs) => abs.to_owned(),
                    None => format!("{}{target}", prefix(dir)),
                };
                out.push((id, ty, target));
            }
            Event::Eof => return Some(out),
            _ => {}
        }
        buf.clear();
    }
}

/// The relationship id of every `<sheet>` of the workbook, in order.
fn sheet_rel_ids<R: Read + Seek>(zip: &mut ZipArchive<R>, workbook: &str) -> Option<Vec<String>> {
    let mut xml = open(zip, workbook)?;
    let mut buf = Vec::new();
    let mut out = Vec::new();
    loop {
        match xml.read_event_into(&mut buf).ok()? {
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "sheet" => {
                let id = e
                    .attributes()
                    .flatten()
                    .find(|a| a.key.local_name().as_ref() == "id" && a.key.prefix().is_some())
                    .and_then(|a| a.normalized_value(XmlVersion::Implicit1_0).ok().map(|v| v.into_owned()))
                    .unwrap_or_default();
                out.push(id);
            }
            Event::Eof => return Some(out),
            _ => {}
        }
        buf.clear();
    }
}

/// Reads the text of the `<si>`/`<is>` element just opened (phonetic runs left out); returns
/// the exact text and whether calamine's trimming changes it.
fn string_item<B: std::io::BufRead>(xml: &mut Reader<B>, end: &str) -> Option<(String, bool)> {
    let mut buf = Vec::new();
    let mut text = String::new();
    let mut trimmed = false;
    let mut in_t = false;
    let mut preserve = false;
    let mut run = String::new();
    let mut phonetic = 0;
    loop {
        match xml.read_event_into(&mut buf).ok()? {
            Event::Start(e) if e.local_name().as_ref() == "rPh" => phonetic += 1,
            Event::End(e) if e.local_name().as_ref() == "rPh" => phonetic -= 1,
            Event::Start(e) if e.local_name().as_ref() == "t" && phonetic == 0 => {
                in_t = true;
                run.clear();
                preserve =
                    e.attributes().flatten().any(|a| a.key.as_ref() == "xml:space" && a.value.as_ref() == "preserve");
            }
            Event::Text(t) if in_t => run.push_str(&t.xml10_content()),
            Event::CData(t) if in_t => run.push_str(&t.xml10_content()),
            Event::GeneralRef(r) if in_t => match r.resolve_char_ref().ok()? {
                Some(c) => run.push(c),
                None => run.push(match r.as_ref() {
                    "amp" => '&',
                    "lt" => '<',
                    "gt" => '>',
                    "quot" => '"',
                    "apos" => '\'',
                    _ => return None,
                }),
            },
            Event::End(e) if e.local_name().as_ref() == "t" && in_t => {
                in_t = false;
                if !preserve && run.trim_matches(TRIMMED).len() != run.len() {
                    trimmed = true;
                }
                text.push_str(&unescape_ooxml(&run)?);
            }
            Event::End(e) if e.local_name().as_ref() == end => return Some((text, trimmed)),
            Event::Eof => return None,
            _ => {}
        }
        buf.clear();
    }
}

/// OOXML's `_xHHHH_` escapes (control characters, and `_x005F_` for a literal underscore).
/// Surrogate escapes give `None` (calamine's value is kept for such a cell).
fn unescape_ooxml(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("_x") {
        let tail = &rest[at + 2..];
        let hex = tail.get(..4).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
        match (hex, tail.as_bytes().get(4)) {
            (Some(h), Some(b'_')) => {
                out.push_str(&rest[..at]);
                out.push(char::from_u32(u32::from_str_radix(h, 16).ok()?)?);
                rest = &tail[5..];
            }
            _ => {
                out.push_str(&rest[..at + 2]);
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    Some(out)
}

/// Shared strings that calamine trims, by index.
fn shared_strings<R: Read + Seek>(zip: &mut ZipArchive<R>, path: &str) -> Option<HashMap<usize, String>> {
    let mut xml = open(zip, path)?;
    let mut buf = Vec::new();
    let mut out = HashMap::new();
    let mut i = 0;
    loop {
        match xml.read_event_into(&mut buf).ok()? {
            Event::Start(e) if e.local_name().as_ref() == "si" => {
                if let Some((text, true)) = string_item(&mut xml, "si") {
                    out.insert(i, text);
                }
                i += 1;
            }
            Event::Empty(e) if e.local_name().as_ref() == "si" => i += 1,
            Event::Eof => return Some(out),
            _ => {}
        }
        buf.clear();
    }
}

/// `B12` -> (11, 1).
fn cell_ref(r: &str) -> Option<(u32, u32)> {
    let letters = r.bytes().take_while(u8::is_ascii_alphabetic).count();
    let col = r[..letters]
        .bytes()
        .try_fold(0u32, |acc, b| acc.checked_mul(26)?.checked_add((b.to_ascii_uppercase() - b'A' + 1) as u32))?;
    let row: u32 = r[letters..].parse().ok()?;
    Some((row.checked_sub(1)?, col.checked_sub(1)?))
}

fn sheet_cells<R: Read + Seek>(
    zip: &mut ZipArchive<R>,
    path: &str,
    shared: &HashMap<usize, String>,
) -> Option<HashMap<(u32, u32), String>> {
    let mut xml = open(zip, path)?;
    let mut buf = Vec::new();
    let mut out = HashMap::new();
    // Position of the current cell; cells without `r` follow the previous one.
    let (mut row, mut col): (u32, i64) = (0, -1);
    let mut kind = Vec::new();
    let mut in_v = false;
    loop {
        match xml.read_event_into(&mut buf).ok()? {
            Event::Start(e) if e.local_name().as_ref() == "row" => {
                if let Some(r) = e.try_get_attribute("r").ok().flatten() {
                    row = r.value.parse::<u32>().ok()?.checked_sub(1)?;
                }
                col = -1;
            }
            // Rows without `r` follow the previous one (calamine counts the same way).
            Event::End(e) if e.local_name().as_ref() == "row" => row += 1,
            Event::Empty(e) if e.local_name().as_ref() == "row" => row += 1,
            Event::Start(e) | Event::Empty(e) if e.local_name().as_ref() == "c" => {
                match e.try_get_attribute("r").ok().flatten().and_then(|r| cell_ref(&r.value)) {
                    Some((r, c)) => {
                        row = r;
                        col = c as i64;
                    }
                    None => col += 1,
                }
                kind = e
                    .try_get_attribute("t")
                    .ok()
                    .flatten()
                    .map(|a| a.value.into_owned().into_bytes())
                    .unwrap_or_default();
            }
            Event::Start(e) if e.local_name().as_ref() == "is" => {
                if let Some((text, true)) = string_item(&mut xml, "is") {
                    out.insert((row, col as u32), text);
                }
            }
            Event::Start(e) if e.local_name().as_ref() == "v" && kind == b"s" && !shared.is_empty() => in_v = true,
            Event::Text(t) if in_v => {
                if let Some(s) = t.xml10_content().trim().parse::<usize>().ok().and_then(|i| shared.get(&i)) {
                    out.insert((row, col as u32), s.clone());
                }
            }
            Event::End(e) if e.local_name().as_ref() == "v" => in_v = false,
            Event::Eof => return Some(out),
            _ => {}
        }
        buf.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_and_escapes() {
        assert_eq!(cell_ref("A1"), Some((0, 0)));
        assert_eq!(cell_ref("AB12"), Some((11, 27)));
        assert_eq!(cell_ref("A0"), None);
        assert_eq!(unescape_ooxml("a_x000D_b_x005F_c_xZZ").as_deref(), Some("a\rb_c_xZZ"));
    }
}

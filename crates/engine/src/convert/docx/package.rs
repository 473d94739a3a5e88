//! Writing the DOCX: paragraphs, pictures and tables as WordprocessingML, and the
//! package (document, relationships, styles, media) zipped into place atomically.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use super::items::{Line, Run};
use crate::control::JobControl;
use crate::error::{EngineError, Result};
use crate::pdf::save::write_atomically;

const EMU_PER_PT: f64 = 12_700.0;

fn xml_escape(out: &mut String, s: &str) {
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\t' | '\n' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
}

fn is_rtl_char(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFF)
}

/// The document being written: WordprocessingML of the body, the pictures, and counts.
pub(super) struct Writer {
    body: String,
    media: Vec<(String, Vec<u8>)>,
    pub(super) paragraphs: u32,
    pub(super) images_skipped: u32,
    pub(super) tables: u32,
    text_width_pt: f64,
}

impl Writer {
    /// An empty document whose pictures and tables fit `text_width_pt`.
    pub(super) fn new(text_width_pt: f64) -> Self {
        Self { body: String::new(), media: Vec::new(), paragraphs: 0, images_skipped: 0, tables: 0, text_width_pt }
    }

    pub(super) fn paragraph(&mut self, lines: &[Line], centred: bool) {
        let mut runs: Vec<Run> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            for (j, run) in line.runs.iter().enumerate() {
                let mut text = run.text.clone();
                // Lines of a paragraph are joined with one space; a word hyphenated at the
                // end of a line ("adip-" + "iscing") is joined back, as pdftotext does.
                if i > 0 && j == 0 {
                    let starts_lower = text.chars().next().is_some_and(|c| c.is_lowercase());
                    let hyphenated = runs.last_mut().filter(|r| {
                        let mut it = r.text.trim_end().chars().rev();
                        matches!((it.next(), it.next()), (Some('-' | '\u{00AD}'), Some(c)) if c.is_alphabetic())
                    });
                    match hyphenated {
                        Some(last) if starts_lower => {
                            let trimmed = last.text.trim_end();
                            let hyphen = trimmed.chars().next_back().map_or(0, char::len_utf8);
                            let keep = trimmed.len() - hyphen;
                            last.text.truncate(keep);
                        }
                        _ => {
                            let prev_space = runs.last().is_some_and(|r| r.text.ends_with(' '));
                            if !prev_space && !text.starts_with(' ') {
                                text.insert(0, ' ');
                            }
                        }
                    }
                }
                match runs.last_mut() {
                    Some(last) if last.style == run.style => last.text.push_str(&text),
                    _ => runs.push(Run { style: run.style.clone(), text }),
                }
            }
        }
        let all: String = runs.iter().map(|r| r.text.as_str()).collect();
        if all.trim().is_empty() {
            return;
        }
        let letters = all.chars().filter(|c| c.is_alphabetic()).count();
        let rtl = letters > 0 && all.chars().filter(|&c| is_rtl_char(c)).count() * 2 > letters;
        self.body.push_str("<w:p><w:pPr><w:spacing w:after=\"120\"/>");
        if rtl {
            self.body.push_str("<w:bidi/>");
        }
        if centred {
            self.body.push_str("<w:jc w:val=\"center\"/>");
        }
        self.body.push_str("</w:pPr>");
        for run in &runs {
            let s = &run.style;
            self.body.push_str("<w:r><w:rPr>");
            let mut f = String::new();
            xml_escape(&mut f, &s.font);
            let _ = write!(self.body, "<w:rFonts w:ascii=\"{f}\" w:hAnsi=\"{f}\" w:eastAsia=\"{f}\" w:cs=\"{f}\"/>");
            if s.bold {
                self.body.push_str("<w:b/><w:bCs/>");
            }
            if s.italic {
                self.body.push_str("<w:i/><w:iCs/>");
            }
            if s.strike {
                self.body.push_str("<w:strike/>");
            }
            if s.color & 0xFF_FFFF != 0 {
                let _ = write!(self.body, "<w:color w:val=\"{:06X}\"/>", s.color & 0xFF_FFFF);
            }
            let _ = write!(self.body, "<w:sz w:val=\"{0}\"/><w:szCs w:val=\"{0}\"/>", s.half_points);
            if s.underline {
                self.body.push_str("<w:u w:val=\"single\"/>");
            }
            if rtl {
                self.body.push_str("<w:rtl/>");
            }
            self.body.push_str("</w:rPr><w:t xml:space=\"preserve\">");
            xml_escape(&mut self.body, &run.text);
            self.body.push_str("</w:t></w:r>");
        }
        self.body.push_str("</w:p>");
        self.paragraphs += 1;
    }

    pub(super) fn plain_paragraph(&mut self, text: &str) {
        self.body.push_str("<w:p><w:r><w:t xml:space=\"preserve\">");
        xml_escape(&mut self.body, text);
        self.body.push_str("</w:t></w:r></w:p>");
        self.paragraphs += 1;
    }

    pub(super) fn picture(&mut self, png: Vec<u8>, width_pt: f64, height_pt: f64) {
        let n = self.media.len() + 1;
        let rid = format!("rIdImg{n}");
        self.media.push((format!("image{n}.png"), png));
        let scale = if width_pt > self.text_width_pt { self.text_width_pt / width_pt } else { 1.0 };
        let cx = (width_pt * scale * EMU_PER_PT).max(1.0) as u64;
        let cy = (height_pt * scale * EMU_PER_PT).max(1.0) as u64;
        let _ = write!(
            self.body,
            "<w:p><w:r><w:drawing><wp:inline distT=\"0\" distB=\"0\" distL=\"0\" distR=\"0\"><wp:extent cx=\"{cx}\" cy=\"{cy}\"/><wp:docPr id=\"{n}\" name=\"Picture {n}\"/><a:graphic xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\"><a:graphicData uri=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"><pic:pic xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"><pic:nvPicPr><pic:cNvPr id=\"{n}\" name=\"image{n}.png\"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed=\"{rid}\"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill><pic:spPr><a:xfrm><a:off x=\"0\" y=\"0\"/><a:ext cx=\"{cx}\" cy=\"{cy}\"/></a:xfrm><a:prstGeom prst=\"rect\"><a:avLst/></a:prstGeom></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"
        );
    }

    /// A Word table with single borders; column widths proportional to the PDF's, scaled to
    /// the text width. Cells of one line group each become one paragraph (lines joined).
    pub(super) fn table(&mut self, widths: &[f32], rows: &[Vec<Vec<Line>>]) {
        // Column widths: the cell extents plus their share of the gaps, scaled to fit.
        let total: f32 = widths.iter().sum::<f32>().max(1.0);
        let avail_tw = self.text_width_pt * 20.0;
        let tw: Vec<u64> = widths.iter().map(|w| ((*w / total) as f64 * avail_tw).round().max(200.0) as u64).collect();
        self.body.push_str("<w:tbl><w:tblPr><w:tblW w:w=\"0\" w:type=\"auto\"/><w:tblBorders>");
        for side in ["top", "left", "bottom", "right", "insideH", "insideV"] {
            let _ = write!(self.body, "<w:{side} w:val=\"single\" w:sz=\"4\" w:space=\"0\" w:color=\"auto\"/>");
        }
        self.body.push_str("</w:tblBorders><w:tblLayout w:type=\"fixed\"/></w:tblPr><w:tblGrid>");
        for w in &tw {
            let _ = write!(self.body, "<w:gridCol w:w=\"{w}\"/>");
        }
        self.body.push_str("</w:tblGrid>");
        for row in rows {
            self.body.push_str("<w:tr>");
            for (c, cell) in row.iter().enumerate() {
                let _ = write!(
                    self.body,
                    "<w:tc><w:tcPr><w:tcW w:w=\"{}\" w:type=\"dxa\"/></w:tcPr>",
                    tw.get(c).copied().unwrap_or(200)
                );
                let before = self.body.len();
                if !cell.is_empty() {
                    self.paragraph(cell, false);
                }
                if self.body.len() == before {
                    self.body.push_str("<w:p/>");
                }
                self.body.push_str("</w:tc>");
            }
            self.body.push_str("</w:tr>");
        }
        self.body.push_str("</w:tbl>");
        self.tables += 1;
    }

    pub(super) fn page_break(&mut self) {
        self.body.push_str("<w:p><w:r><w:br w:type=\"page\"/></w:r></w:p>");
    }

    /// Zips the package (document with one section of `page` size (points) and `margin_pt`
    /// margins, relationships, styles, app properties naming `pages`, media) into `output`,
    /// atomically. Returns the pictures embedded and the bytes written.
    pub(super) fn finish(
        self,
        output: &Path,
        control: &JobControl,
        page: (f64, f64),
        margin_pt: f64,
        pages: usize,
    ) -> Result<(u32, u64)> {
        let (page_w, page_h) = page;
        let body = self.body;
        let images = self.media.len() as u32;
        let (pw_tw, ph_tw) = ((page_w * 20.0).round() as u64, (page_h * 20.0).round() as u64);
        let margin_tw = (margin_pt * 20.0) as u64;
        let orient = if page_w > page_h { " w:orient=\"landscape\"" } else { "" };
        let document = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:document xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\" xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\" xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\"><w:body>{body}<w:sectPr><w:pgSz w:w=\"{pw_tw}\" w:h=\"{ph_tw}\"{orient}/><w:pgMar w:top=\"{margin_tw}\" w:right=\"{margin_tw}\" w:bottom=\"{margin_tw}\" w:left=\"{margin_tw}\" w:header=\"0\" w:footer=\"0\" w:gutter=\"0\"/></w:sectPr></w:body></w:document>"
        );
        let mut rels = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rIdStyles\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" Target=\"styles.xml\"/>");
        for (i, (name, _)) in self.media.iter().enumerate() {
            let _ = write!(rels, "<Relationship Id=\"rIdImg{}\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/image\" Target=\"media/{name}\"/>", i + 1);
        }
        rels.push_str("</Relationships>");
        let content_types = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"><Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/><Default Extension=\"xml\" ContentType=\"application/xml\"/><Default Extension=\"png\" ContentType=\"image/png\"/><Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/><Override PartName=\"/word/styles.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml\"/><Override PartName=\"/docProps/app.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.extended-properties+xml\"/></Types>";
        let root_rels = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/><Relationship Id=\"rId2\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties\" Target=\"docProps/app.xml\"/></Relationships>";
        let styles = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<w:styles xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii=\"Calibri\" w:hAnsi=\"Calibri\" w:eastAsia=\"Calibri\" w:cs=\"Calibri\"/><w:sz w:val=\"22\"/><w:szCs w:val=\"22\"/><w:lang w:val=\"en-US\"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing w:after=\"0\" w:line=\"240\" w:lineRule=\"auto\"/></w:pPr></w:pPrDefault></w:docDefaults><w:style w:type=\"paragraph\" w:default=\"1\" w:styleId=\"Normal\"><w:name w:val=\"Normal\"/></w:style></w:styles>";
        let app = format!("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Properties xmlns=\"http://schemas.openxmlformats.org/officeDocument/2006/extended-properties\"><Application>docproc</Application><Pages>{}</Pages></Properties>", pages);
        let media = self.media;
        let output_bytes = write_atomically(output, control, |tmp| {
            let file = File::create(tmp).map_err(|e| EngineError::io("creating the output", e))?;
            let mut zip = zip::ZipWriter::new(BufWriter::new(file));
            let deflate = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
            let stored = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
            let zerr = |e: zip::result::ZipError| EngineError::io("writing the DOCX", std::io::Error::other(e));
            let parts: [(&str, &[u8]); 6] = [
                ("[Content_Types].xml", content_types.as_bytes()),
                ("_rels/.rels", root_rels.as_bytes()),
                ("word/document.xml", document.as_bytes()),
                ("word/_rels/document.xml.rels", rels.as_bytes()),
                ("word/styles.xml", styles.as_bytes()),
                ("docProps/app.xml", app.as_bytes()),
            ];
            for (name, data) in parts {
                zip.start_file(name, deflate).map_err(zerr)?;
                zip.write_all(data).map_err(|e| EngineError::io("writing the DOCX", e))?;
            }
            for (name, data) in &media {
                zip.start_file(format!("word/media/{name}"), stored).map_err(zerr)?;
                zip.write_all(data).map_err(|e| EngineError::io("writing the DOCX", e))?;
            }
            let mut inner = zip.finish().map_err(zerr)?;
            inner.flush().map_err(|e| EngineError::io("writing the DOCX", e))
        })?;
        Ok((images, output_bytes))
    }
}

/// Splits a text block into paragraphs at large gaps and writes them.
pub(super) fn emit_text(w: &mut Writer, lines: &[Line], bounds: mupdf::Rect) {
    let mut start = 0;
    for i in 1..=lines.len() {
        let split = i == lines.len() || {
            let (prev, next) = (&lines[i - 1], &lines[i]);
            let gap = next.y0 - prev.y1;
            gap > 0.8 * prev.size.max(next.size)
                || next.x0 > prev.x0 + 2.0 * next.size && i > start + 1 && next.x1 < prev.x1
        };
        if split {
            let para = &lines[start..i];
            let page_mid = (bounds.x0 + bounds.x1) / 2.0;
            let centred = para.len() == 1 && {
                let mid = (para[0].x0 + para[0].x1) / 2.0;
                (mid - page_mid).abs() < 6.0 && para[0].x0 > bounds.x0 + 0.15 * (bounds.x1 - bounds.x0)
            };
            w.paragraph(para, centred);
            start = i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xml_text_is_escaped_and_control_characters_dropped() {
        let mut s = String::new();
        xml_escape(&mut s, "a<b & \"c\"\u{1}>");
        assert_eq!(s, "a&lt;b &amp; &quot;c&quot;&gt;");
    }
}

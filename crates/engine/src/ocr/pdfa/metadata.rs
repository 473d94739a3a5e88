//! The document information PDF/A keeps: the Info dictionary, rewritten to the entries that
//! have an XMP property, and the XMP packet that repeats them with the PDF/A identification.

use std::time::SystemTime;

use mupdf::pdf::{PdfDocument, PdfObject};

use super::date::Date;
use super::objects::{get, is_dict};
use super::PRODUCER;
use crate::error::{MuPdfResultExt, Result};

/// The document information PDF/A keeps, in the Info dictionary and in XMP alike.
pub(super) struct Info {
    title: Option<String>,
    author: Option<String>,
    subject: Option<String>,
    keywords: Option<String>,
    creator: Option<String>,
    created: Date,
    modified: Date,
}

impl Info {
    pub(super) fn read(trailer: &PdfObject, now: SystemTime) -> Self {
        let info = get(trailer, "Info").filter(is_dict);
        let field = |key: &str| {
            info.as_ref()
                .and_then(|i| get(i, key))
                .and_then(|v| v.as_string().ok())
                .map(|s| s.replace('\0', ""))
                .filter(|s| !s.trim().is_empty())
        };
        let modified = Date::utc(now);
        Info {
            title: field("Title"),
            author: field("Author"),
            subject: field("Subject"),
            keywords: field("Keywords"),
            creator: field("Creator"),
            created: field("CreationDate").and_then(|d| Date::parse_pdf(&d)).unwrap_or(modified),
            modified,
        }
    }

    pub(super) fn write(&self, doc: &mut PdfDocument) -> Result<PdfObject> {
        let mut dict = doc.new_dict().ctx("Info")?;
        let texts = [
            ("Title", &self.title),
            ("Author", &self.author),
            ("Subject", &self.subject),
            ("Keywords", &self.keywords),
            ("Creator", &self.creator),
        ];
        for (key, value) in texts {
            if let Some(v) = value {
                dict.dict_put(key, PdfObject::new_string(v).ctx("Info")?).ctx("Info")?;
            }
        }
        dict.dict_put("Producer", PdfObject::new_string(PRODUCER).ctx("Info")?).ctx("Info")?;
        dict.dict_put("CreationDate", PdfObject::new_string(&self.created.pdf()).ctx("Info")?).ctx("Info")?;
        dict.dict_put("ModDate", PdfObject::new_string(&self.modified.pdf()).ctx("Info")?).ctx("Info")?;
        doc.add_object(&dict).ctx("Info")
    }

    /// The XMP packet: PDF/A identification and the Info dictionary's values.
    pub(super) fn xmp(&self) -> String {
        let esc = |s: &str| {
            s.chars()
                .filter(|&c| matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..))
                .collect::<String>()
                .replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        };
        let mut dc = String::new();
        if let Some(t) = &self.title {
            dc += &format!(
                "   <dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">{}</rdf:li></rdf:Alt></dc:title>\n",
                esc(t)
            );
        }
        if let Some(a) = &self.author {
            dc += &format!("   <dc:creator><rdf:Seq><rdf:li>{}</rdf:li></rdf:Seq></dc:creator>\n", esc(a));
        }
        if let Some(s) = &self.subject {
            dc += &format!(
                "   <dc:description><rdf:Alt><rdf:li xml:lang=\"x-default\">{}</rdf:li></rdf:Alt></dc:description>\n",
                esc(s)
            );
        }
        let mut pdf = format!("   <pdf:Producer>{PRODUCER}</pdf:Producer>\n");
        if let Some(k) = &self.keywords {
            pdf += &format!("   <pdf:Keywords>{}</pdf:Keywords>\n", esc(k));
        }
        let mut xmp = format!(
            "   <xmp:CreateDate>{}</xmp:CreateDate>\n   <xmp:ModifyDate>{}</xmp:ModifyDate>\n",
            self.created.xmp(),
            self.modified.xmp()
        );
        if let Some(c) = &self.creator {
            xmp += &format!("   <xmp:CreatorTool>{}</xmp:CreatorTool>\n", esc(c));
        }
        format!(
            "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n\
             <x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\n\
             <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n\
             \x20<rdf:Description rdf:about=\"\" xmlns:pdfaid=\"http://www.aiim.org/pdfa/ns/id/\">\n\
             \x20  <pdfaid:part>2</pdfaid:part>\n\
             \x20  <pdfaid:conformance>B</pdfaid:conformance>\n\
             \x20</rdf:Description>\n\
             \x20<rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n\
             \x20  <dc:format>application/pdf</dc:format>\n{dc}\
             \x20</rdf:Description>\n\
             \x20<rdf:Description rdf:about=\"\" xmlns:pdf=\"http://ns.adobe.com/pdf/1.3/\">\n{pdf}\
             \x20</rdf:Description>\n\
             \x20<rdf:Description rdf:about=\"\" xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\">\n{xmp}\
             \x20</rdf:Description>\n\
             </rdf:RDF>\n\
             </x:xmpmeta>\n\
             <?xpacket end=\"w\"?>"
        )
    }
}

//! pdf -> docx over corpus PDFs: scanned pages OCRed into editable paragraphs, tables as
//! Word tables, form field values, reading order.
use std::io::Read;
use std::path::Path;

use engine::convert::docx::{pdf_to_docx, PdfToDocxOptions};
use engine::JobControl;

mod common;
use common::{corpus_dir, init_ocr};

fn document_xml(path: &Path) -> String {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
    let mut xml = String::new();
    zip.by_name("word/document.xml").unwrap().read_to_string(&mut xml).unwrap();
    xml
}

/// Text of the `<w:t>` elements, space-separated.
fn text_of(xml: &str) -> String {
    let mut out = String::new();
    for part in xml.split("<w:t xml:space=\"preserve\">").skip(1) {
        out.push_str(part.split("</w:t>").next().unwrap());
        out.push(' ');
    }
    out
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
#[cfg_attr(all(has_corpus, not(has_ocr_models)), ignore = "OCR models missing: run scripts/setup.sh")]
fn docx_scanned_page_is_ocred_into_editable_paragraphs() {
    let corpus = corpus_dir();
    init_ocr();
    let out = std::env::temp_dir().join(format!("docx-ocr-{}.docx", std::process::id()));
    let input = corpus.join("files/scanned-huckfinn-page.pdf");
    // Without OCR: the page is listed, no text.
    let r = pdf_to_docx(&input, &out, &PdfToDocxOptions::default(), &JobControl::new()).unwrap();
    assert_eq!(r.pages_without_text, vec![0]);
    assert!(r.pages_ocred.is_empty());
    assert!(text_of(&document_xml(&out)).trim().is_empty());
    // With OCR: paragraphs of recognised words in reading order, the scan picture replaced.
    let opts = PdfToDocxOptions { ocr: true, ..Default::default() };
    let r = pdf_to_docx(&input, &out, &opts, &JobControl::new()).unwrap();
    assert_eq!(r.pages_without_text, vec![0]);
    assert_eq!(r.pages_ocred, vec![0]);
    assert_eq!(r.pages_processed, 1);
    assert!(r.paragraphs >= 1, "{r:?}");
    assert_eq!(r.images, 0, "the page-sized scan is replaced by its text");
    let text = text_of(&document_xml(&out)).to_lowercase();
    eprintln!("{text}");
    let words: Vec<&str> = text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect();
    assert!(words.len() > 100, "{} words", words.len());
    // Real words of the page, in reading order.
    let mut at = 0;
    for w in ["widow", "garden", "kitchen", "jim", "listened", "scratch"] {
        let found = words[at..].iter().position(|x| *x == w);
        assert!(found.is_some(), "{w} missing or out of order");
        at += found.unwrap() + 1;
    }
    let _ = std::fs::remove_file(&out);
}

fn count(xml: &str, what: &str) -> usize {
    xml.matches(what).count()
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn docx_tables_become_word_tables_and_multicolumn_prose_stays_paragraphs() {
    let corpus = corpus_dir();
    let out = std::env::temp_dir().join(format!("docx-tables-{}.docx", std::process::id()));
    // google-docs-export: a table of countries (5 rows; "Europe" spans two columns, which
    // merges them: 5 columns).
    let r = pdf_to_docx(
        &corpus.join("files/google-docs-export.pdf"),
        &out,
        &PdfToDocxOptions::default(),
        &JobControl::new(),
    )
    .unwrap();
    assert_eq!(r.tables, 1, "{r:?}");
    let xml = document_xml(&out);
    let table = &xml[xml.find("<w:tbl>").unwrap()..xml.find("</w:tbl>").unwrap()];
    assert_eq!(count(table, "<w:tr>"), 5);
    assert_eq!(count(table, "<w:gridCol "), 5);
    let first_row = &table[..table.find("</w:tr>").unwrap()];
    assert_eq!(count(first_row, "<w:tc>"), 5);
    for w in ["Indonesia", "Jakarta", "Vatican City", "Population", "67,413,000"] {
        assert!(text_of(table).contains(w), "{w} not in the table");
    }
    // Text before and after the table stays outside it, in order.
    let before = text_of(&xml[..xml.find("<w:tbl>").unwrap()]);
    assert!(before.contains("Beautiful is better than ugly."));
    // Two-column prose is not a table.
    for name in ["latex-multicolumn.pdf", "pdfa-crazyones.pdf", "japanese-tex-dvipdfmx.pdf"] {
        let r =
            pdf_to_docx(&corpus.join(format!("files/{name}")), &out, &PdfToDocxOptions::default(), &JobControl::new())
                .unwrap();
        assert_eq!(r.tables, 0, "{name}");
        assert_eq!(count(&document_xml(&out), "<w:tbl>"), 0, "{name}");
    }
    let _ = std::fs::remove_file(&out);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn docx_form_field_values_are_text_once() {
    let corpus = corpus_dir();
    let out = std::env::temp_dir().join(format!("docx-fields-{}.docx", std::process::id()));
    // LibreOffice's form: "Alice" and "Bob" are field values with empty appearance streams
    // (NeedAppearances): written once each, after the labels of their rows.
    pdf_to_docx(
        &corpus.join("files/libreoffice-form-fields.pdf"),
        &out,
        &PdfToDocxOptions::default(),
        &JobControl::new(),
    )
    .unwrap();
    let text = text_of(&document_xml(&out));
    assert_eq!(text.matches("Alice").count(), 1, "{text}");
    assert_eq!(text.matches("Bob").count(), 1, "{text}");
    assert!(text.find("First Name").unwrap() < text.find("Alice").unwrap(), "{text}");
    // LaTeX's form draws its field's text itself ("Name"): not written twice.
    pdf_to_docx(&corpus.join("files/latex-form-fields.pdf"), &out, &PdfToDocxOptions::default(), &JobControl::new())
        .unwrap();
    let text = text_of(&document_xml(&out));
    assert_eq!(text.matches("Name").count(), 1, "{text}");
    let _ = std::fs::remove_file(&out);
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn docx_footnotes_set_one_line_per_block_read_top_to_bottom() {
    let corpus = corpus_dir();
    // google-docs-export writes its three footnotes bottom-up; their boxes touch.
    let out = std::env::temp_dir().join(format!("docx-footnotes-{}.docx", std::process::id()));
    pdf_to_docx(&corpus.join("files/google-docs-export.pdf"), &out, &PdfToDocxOptions::default(), &JobControl::new())
        .unwrap();
    let text = text_of(&document_xml(&out));
    let at = |s: &str| text.find(s).unwrap_or_else(|| panic!("{s} not in {text}"));
    assert!(at("2021 estimate") < at("2020 estimate"), "{text}");
    let _ = std::fs::remove_file(&out);
}

#[test]
#[ignore = "a debugging aid, not a check: DOCX_PDF=<pdf> cargo test docx_dump_tables -- --ignored --nocapture"]
fn docx_dump_tables() {
    let name = std::env::var("DOCX_PDF").unwrap();
    let out = std::env::temp_dir().join("docx-dump.docx");
    pdf_to_docx(Path::new(&name), &out, &PdfToDocxOptions::default(), &JobControl::new()).unwrap();
    let xml = document_xml(&out);
    for t in xml.split("<w:tbl>").skip(1) {
        let t = &t[..t.find("</w:tbl>").unwrap()];
        for row in t.split("<w:tr>").skip(1) {
            eprintln!("ROW: {}", row.split("<w:tc>").skip(1).map(text_of).collect::<Vec<_>>().join(" | "));
        }
    }
}

/// A one-page PDF: a line in Helvetica with a proper text layer, then `body` lines drawn by
/// Type3 fonts whose glyphs show Courier letters while their codes name other characters:
/// `/F2` draws them at codes 1-31 and 33-53 with names in no glyph list (no Unicode), `/F3` maps each letter to
/// a punctuation glyph name (a custom encoding whose text layer is symbols). Also a font whose
/// `/BaseFont` is not UTF-8.
fn unmapped_text_pdf(body: &[(&str, &str)]) -> Vec<u8> {
    const SYMBOLS: [&str; 26] = [
        "exclam",
        "quotedbl",
        "numbersign",
        "dollar",
        "percent",
        "ampersand",
        "quotesingle",
        "parenleft",
        "parenright",
        "asterisk",
        "plus",
        "comma",
        "slash",
        "colon",
        "semicolon",
        "less",
        "equal",
        "greater",
        "question",
        "at",
        "bracketleft",
        "backslash",
        "bracketright",
        "asciicircum",
        "braceleft",
        "bar",
    ];
    let mut objects: Vec<Vec<u8>> = Vec::new();
    // 1 catalog, 2 pages, 3 page, 4 content, 5 Helvetica, 6 Courier, 7 F2, 8 F3, 9 bad-name font,
    // then one charproc per letter and font.
    let letters: Vec<char> = ('a'..='z').chain('A'..='Z').collect();
    let mut content =
        String::from("BT /F1 12 Tf 72 720 Td (This line has a proper text layer and stays as it is.) Tj ET\n");
    content.push_str("BT /F4 12 Tf 72 700 Td (Named in bytes that are not UTF-8.) Tj ET\n");
    content.push_str("BT /F1 12 Tf 72 90 Td (Contents ......................................... 3) Tj ET\n");
    for (i, (font, line)) in body.iter().enumerate() {
        // /F2 draws letter k of `letters` at code k + 1 (k + 2 from the space's code 32 on: a
        // code that is no character), /F3 at the letter's own code.
        let escaped: String = line
            .chars()
            .map(|c| match letters.iter().position(|&l| l == c) {
                Some(k) if *font == "F2" => format!("\\{:03o}", if k + 1 < 32 { k + 1 } else { k + 2 }),
                _ if c == '(' || c == ')' || c == '\\' => format!("\\{c}"),
                _ => c.to_string(),
            })
            .collect();
        content.push_str(&format!("BT /{font} 12 Tf 72 {} Td ({escaped}) Tj ET\n", 670 - 20 * i as i32));
    }
    let first_proc = 10;
    let mut procs: Vec<String> = Vec::new();
    let type3 = |names: &dyn Fn(char) -> String, code: &dyn Fn(usize, char) -> u32, proc_base: usize| {
        let mut diffs = String::from("32 /space ");
        let mut charprocs = format!("/space {} 0 R ", proc_base + letters.len());
        for (k, &c) in letters.iter().enumerate() {
            diffs.push_str(&format!("{} /{} ", code(k, c), names(c)));
            charprocs.push_str(&format!("/{} {} 0 R ", names(c), proc_base + k));
        }
        format!(
            "<< /Type /Font /Subtype /Type3 /FontBBox [0 -200 600 800] /FontMatrix [0.001 0 0 0.001 0 0] \
             /CharProcs << {charprocs}>> /Encoding << /Type /Encoding /Differences [{diffs}] >> \
             /FirstChar 0 /LastChar 122 /Widths [{}] /Resources << /Font << /C 6 0 R >> >> >>",
            vec!["600"; 123].join(" ")
        )
    };
    // Names in no glyph list (`g97` or `uni0061` would give MuPDF the letter).
    let f2 = type3(
        &|c| format!("qzq{}{}", (b'a' + c as u8 / 26) as char, (b'a' + c as u8 % 26) as char),
        &|k, _| if k + 1 < 32 { k as u32 + 1 } else { k as u32 + 2 },
        first_proc,
    );
    let f3 = type3(
        &|c| {
            let k = (c.to_ascii_lowercase() as u8 - b'a') as usize;
            if c.is_ascii_uppercase() {
                format!("{}.sc", SYMBOLS[k])
            } else {
                SYMBOLS[k].to_owned()
            }
        },
        &|_, c| c as u32,
        first_proc + letters.len() + 1,
    );
    for _font in 0..2 {
        for &c in &letters {
            procs.push(format!("600 0 d0 BT /C 1000 Tf 0 0 Td ({c}) Tj ET"));
        }
        procs.push("600 0 d0".to_owned());
    }
    objects.push(b"<< /Type /Catalog /Pages 2 0 R >>".to_vec());
    objects.push(b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec());
    objects.push(
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
          /Resources << /Font << /F1 5 0 R /F2 7 0 R /F3 8 0 R /F4 9 0 R >> >> >>"
            .to_vec(),
    );
    objects.push(format!("<< /Length {} >>\nstream\n{content}endstream", content.len()).into_bytes());
    objects.push(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".to_vec());
    objects.push(b"<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>".to_vec());
    objects.push(f2.into_bytes());
    objects.push(f3.into_bytes());
    let mut bad = b"<< /Type /Font /Subtype /Type1 /BaseFont /".to_vec();
    bad.extend_from_slice(&[0xC3, 0x28, 0xFF, b'X']);
    bad.extend_from_slice(b" /Encoding /WinAnsiEncoding >>");
    objects.push(bad);
    for p in procs {
        objects.push(format!("<< /Length {} >>\nstream\n{p}\nendstream", p.len() + 1).into_bytes());
    }
    let mut pdf = b"%PDF-1.7\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        pdf.extend_from_slice(o);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for o in offsets {
        pdf.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    pdf
}

fn words_of(text: &str) -> Vec<String> {
    text.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_owned).collect()
}

#[test]
#[cfg_attr(not(has_ocr_models), ignore = "OCR models missing: run scripts/setup.sh")]
fn docx_lines_without_a_usable_unicode_mapping_are_recognised_and_mapped_lines_kept() {
    init_ocr();
    let dir = std::env::temp_dir().join(format!("docx-unmapped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("unmapped.pdf");
    let out = dir.join("unmapped.docx");
    let body = [
        ("F2", "Glyphs without any Unicode mapping at all"),
        ("F2", "still show words that a reader expects"),
        ("F3", "Letters encoded as punctuation symbols"),
        ("F3", "must come out as the words they show"),
    ];
    std::fs::write(&input, unmapped_text_pdf(&body)).unwrap();

    // The text pass lists the page, and keeps what it can read; nothing is recognised yet.
    let r = pdf_to_docx(&input, &out, &PdfToDocxOptions::default(), &JobControl::new()).unwrap();
    assert!(r.pages_without_text.is_empty(), "{r:?}");
    assert_eq!(r.pages_unmapped_text, vec![0], "{r:?}");
    assert_eq!(r.lines_recognised, 0);
    let text = text_of(&document_xml(&out));
    assert!(text.contains("This line has a proper text layer"), "{text}");
    assert!(text.contains("Named in bytes that are not UTF-8."), "a font name that is not UTF-8: {text}");
    assert!(!words_of(&text).contains(&"reader".to_owned()), "{text}");

    // With OCR: the unmapped lines hold the words they show, the mapped ones their own text.
    let opts = PdfToDocxOptions { ocr: true, ..Default::default() };
    let r = pdf_to_docx(&input, &out, &opts, &JobControl::new()).unwrap();
    let text = text_of(&document_xml(&out));
    eprintln!("{text}");
    assert_eq!(r.pages_unmapped_text, vec![0], "{r:?}");
    assert_eq!(r.lines_recognised, 4, "{r:?}");
    assert_eq!(r.images, 0, "text is never pasted as a picture: {r:?}");
    assert!(text.contains("This line has a proper text layer and stays as it is."), "{text}");
    let got = words_of(&text);
    let want: Vec<String> = body.iter().flat_map(|(_, l)| words_of(l)).collect();
    let found = want.iter().filter(|w| got.contains(w)).count();
    assert!(found * 10 >= want.len() * 9, "{found} of {} words: {text}", want.len());
    for symbols in ["\"#$", "!\"#"] {
        assert!(!text.contains(symbols), "symbols of the text layer left: {text}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn docx_mapped_text_and_leader_lines_are_not_checked_against_ocr() {
    let dir = std::env::temp_dir().join(format!("docx-mapped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("mapped.pdf");
    let out = dir.join("mapped.docx");
    std::fs::write(&input, unmapped_text_pdf(&[])).unwrap();
    let r = pdf_to_docx(&input, &out, &PdfToDocxOptions::default(), &JobControl::new()).unwrap();
    assert!(r.pages_unmapped_text.is_empty(), "{r:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

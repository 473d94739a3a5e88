//! Embedded Type 1 fonts (`/FontFile`, what LaTeX embeds) become CFF subsets
//! (`/FontFile3 /Type1C`) of the glyphs used, at every level, rendering the same; a
//! program that cannot be parsed is kept as it is.

mod common;

use std::path::Path;

use common::{compress_at, corpus_file, finish_page, grey_pixels, Scratch};
use engine::pagework::compress::CompressLevel;
use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::{Buffer, Size};

const LEVELS: [CompressLevel; 3] = [CompressLevel::Light, CompressLevel::Balanced, CompressLevel::Strong];

fn text(path: &Path) -> String {
    let out = common::tool("pdftotext").arg(path).arg("-").output().expect("pdftotext (poppler-utils)");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Font programs of `path` by kind: (`FontFile` count, `FontFile3` CFF programs decoded).
fn font_programs(path: &Path) -> (usize, Vec<Vec<u8>>) {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let (mut type1, mut cff) = (0, Vec::new());
    for i in 1..doc.count_objects().unwrap() {
        let Ok(obj) = doc.new_indirect(i as i32, 0) else { continue };
        let Ok(Some(desc)) = obj.resolve() else { continue };
        if !desc.is_dict().unwrap_or(false)
            || desc.get_dict("Type").ok().flatten().map(|t| t.to_string()) != Some("/FontDescriptor".into())
        {
            continue;
        }
        if desc.get_dict("FontFile").unwrap().is_some() {
            type1 += 1;
        }
        if let Some(f) = desc.get_dict("FontFile3").unwrap() {
            assert_eq!(f.get_dict("Subtype").unwrap().unwrap().to_string(), "/Type1C");
            cff.push(f.read_stream().unwrap());
        }
    }
    (type1, cff)
}

/// One INDEX of a CFF program at `at`: its items and where it ends.
fn cff_index(d: &[u8], at: usize) -> (Vec<&[u8]>, usize) {
    let count = u16::from_be_bytes([d[at], d[at + 1]]) as usize;
    if count == 0 {
        return (Vec::new(), at + 2);
    }
    let size = d[at + 2] as usize;
    let off = |k: usize| d[at + 3 + k * size..at + 3 + (k + 1) * size].iter().fold(0usize, |a, &b| a << 8 | b as usize);
    let base = at + 2 + (count + 1) * size;
    ((0..count).map(|k| &d[base + off(k)..base + off(k + 1)]).collect(), base + off(count))
}

/// The number of glyphs of a CFF program (its CharStrings INDEX count).
fn cff_glyph_count(d: &[u8]) -> usize {
    let (_, names_end) = cff_index(d, d[2] as usize);
    let (top, _) = cff_index(d, names_end);
    let (top, mut i, mut operands) = (top[0], 0, Vec::new());
    while i < top.len() {
        let b = top[i];
        i += 1;
        match b {
            28 => {
                operands.push(i16::from_be_bytes([top[i], top[i + 1]]) as i64);
                i += 2;
            }
            29 => {
                operands.push(i32::from_be_bytes(top[i..i + 4].try_into().unwrap()) as i64);
                i += 4;
            }
            30 => {
                while top[i] & 0x0f != 0x0f && top[i] >> 4 != 0x0f {
                    i += 1;
                }
                i += 1;
                operands.push(0);
            }
            32..=246 => operands.push(b as i64 - 139),
            247..=254 => {
                operands.push(0);
                i += 1;
            }
            17 => return cff_index(d, *operands.last().unwrap() as usize).0.len(),
            12 => {
                operands.clear();
                i += 1;
            }
            _ => operands.clear(),
        }
    }
    panic!("no CharStrings in the Top DICT")
}

/// A Type 1 charstring number.
fn num(out: &mut Vec<u8>, v: i32) {
    match v {
        -107..=107 => out.push((v + 139) as u8),
        108..=1131 => out.extend([((v - 108) / 256 + 247) as u8, ((v - 108) % 256) as u8]),
        -1131..=-108 => out.extend([((-v - 108) / 256 + 251) as u8, ((-v - 108) % 256) as u8]),
        _ => {
            out.push(255);
            out.extend(v.to_be_bytes());
        }
    }
}

/// Numbers and operators (`Err` bytes are operators) of a charstring.
fn cs(items: &[Result<i32, &[u8]>]) -> Vec<u8> {
    let mut out = Vec::new();
    for it in items {
        match it {
            Ok(v) => num(&mut out, *v),
            Err(op) => out.extend_from_slice(op),
        }
    }
    out
}

fn encrypt(plain: &[u8], mut r: u16, lead: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for &p in std::iter::repeat_n(&0u8, lead).chain(plain) {
        let c = p ^ (r >> 8) as u8;
        r = (c as u16).wrapping_add(r).wrapping_mul(52845).wrapping_add(22719);
        out.push(c);
    }
    out
}

/// A Type 1 font program with glyphs A (a box, with hints), B (curves, a subroutine,
/// `div`), C and D (never shown); returns (program, Length1, Length2).
fn type1_program() -> (Vec<u8>, usize, usize) {
    let (hsbw, rmoveto, hlineto, vlineto, closepath, endchar) =
        (Err(&[13][..]), Err(&[21][..]), Err(&[6][..]), Err(&[7][..]), Err(&[9][..]), Err(&[14][..]));
    let (rrcurveto, callsubr, ret, div, hstem) =
        (Err(&[8][..]), Err(&[10][..]), Err(&[11][..]), Err(&[12, 12][..]), Err(&[1][..]));
    let glyphs: Vec<(&str, Vec<u8>)> = vec![
        (".notdef", cs(&[Ok(0), Ok(500), hsbw, endchar])),
        (
            "A",
            cs(&[
                Ok(50),
                Ok(600),
                hsbw,
                Ok(0),
                Ok(40),
                hstem,
                Ok(0),
                Ok(0),
                rmoveto,
                Ok(500),
                hlineto,
                Ok(700),
                vlineto,
                Ok(-500),
                hlineto,
                closepath,
                Ok(100),
                Ok(100),
                rmoveto,
                Ok(300),
                hlineto,
                Ok(500),
                vlineto,
                Ok(-300),
                hlineto,
                closepath,
                endchar,
            ]),
        ),
        (
            "B",
            cs(&[
                Ok(40),
                Ok(650),
                hsbw,
                Ok(0),
                Ok(0),
                rmoveto,
                Ok(0),
                callsubr,
                Ok(1001),
                Ok(2),
                div,
                Ok(0),
                Ok(0),
                Ok(300),
                Ok(-200),
                Ok(300),
                rrcurveto,
                Ok(-300),
                Ok(-50),
                Ok(-200),
                Ok(-350),
                Ok(0),
                Ok(-250),
                rrcurveto,
                closepath,
                endchar,
            ]),
        ),
        (
            "C",
            cs(&[Ok(30), Ok(550), hsbw, Ok(0), Ok(0), rmoveto, Ok(400), hlineto, Ok(400), vlineto, closepath, endchar]),
        ),
        (
            "D",
            cs(&[Ok(30), Ok(550), hsbw, Ok(10), Ok(0), rmoveto, Ok(300), Ok(300), Err(&[5][..]), closepath, endchar]),
        ),
    ];
    let subr = cs(&[Ok(100), Ok(0), Err(&[5][..]), Ok(0), Ok(200), Err(&[5][..]), ret]);
    let clear = b"%!PS-AdobeFont-1.0: TestType1 001\n12 dict begin\n/FontName /TestType1 def\n/FontType 1 def\n\
/PaintType 0 def\n/FontMatrix [0.001 0 0 0.001 0 0] readonly def\n/FontBBox {0 0 1000 1000} readonly def\n\
/Encoding 256 array\n0 1 255 {1 index exch /.notdef put} for\ndup 65 /A put\ndup 66 /B put\ndup 67 /C put\n\
dup 68 /D put\nreadonly def\ncurrentdict end\ncurrentfile eexec\n"
        .to_vec();
    let mut private = b"dup /Private 8 dict dup begin\n/RD{string currentfile exch readstring pop}executeonly def\n\
/ND{noaccess def}executeonly def\n/NP{noaccess put}executeonly def\n/BlueValues [-10 0 700 710] def\n\
/StdVW [80] def\n/lenIV 4 def\n/Subrs 1 array\n"
        .to_vec();
    let enc = encrypt(&subr, 4330, 4);
    private.extend(format!("dup 0 {} RD ", enc.len()).as_bytes());
    private.extend(enc);
    private.extend(b" NP\nend\n");
    private.extend(format!("/CharStrings {} dict dup begin\n", glyphs.len()).as_bytes());
    for (name, g) in &glyphs {
        let enc = encrypt(g, 4330, 4);
        private.extend(format!("/{name} {} RD ", enc.len()).as_bytes());
        private.extend(enc);
        private.extend(b" ND\n");
    }
    private.extend(b"end\nend\nmark currentfile closefile\n");
    let binary = encrypt(&private, 55665, 4);
    let (l1, l2) = (clear.len(), binary.len());
    let mut program = clear;
    program.extend(binary);
    program.extend(format!("\n{}cleartomark\n", "0".repeat(64).to_string().repeat(8)).as_bytes());
    (program, l1, l2)
}

/// What the test PDF has besides the page's text.
#[derive(PartialEq)]
enum Extra {
    Nothing,
    /// A second font dictionary of the same program in the resources, never selected.
    UnselectedFont,
    /// An annotation whose appearance state not shown (`/Yes`, the state being `/Off`)
    /// shows this text in the same font.
    HiddenState(&'static str),
}

/// A one-page PDF showing `shown` in the Type 1 font `program`, with `extra`.
fn pdf_with_type1(path: &Path, program: &[u8], l1: usize, l2: usize, shown: &str, extra: Extra) {
    let mut doc = PdfDocument::new();
    let mut file = doc.add_stream(&Buffer::from_bytes(program).unwrap(), None, false).unwrap();
    file.dict_put("Length1", doc.new_int(l1 as i32).unwrap()).unwrap();
    file.dict_put("Length2", doc.new_int(l2 as i32).unwrap()).unwrap();
    file.dict_put("Length3", doc.new_int((program.len() - l1 - l2) as i32).unwrap()).unwrap();
    let mut desc = doc.new_dict().unwrap();
    desc.dict_put("Type", doc.new_name("FontDescriptor").unwrap()).unwrap();
    desc.dict_put("FontName", doc.new_name("TestType1").unwrap()).unwrap();
    desc.dict_put("Flags", doc.new_int(4).unwrap()).unwrap();
    desc.dict_put("FontFile", file).unwrap();
    let desc = doc.add_object(&desc).unwrap();
    let mut font = doc.new_dict().unwrap();
    font.dict_put("Type", doc.new_name("Font").unwrap()).unwrap();
    font.dict_put("Subtype", doc.new_name("Type1").unwrap()).unwrap();
    font.dict_put("BaseFont", doc.new_name("TestType1").unwrap()).unwrap();
    font.dict_put("FontDescriptor", desc).unwrap();
    let other = doc.add_object(&font).unwrap();
    let font = doc.add_object(&font).unwrap();
    let content = format!("BT /F1 48 Tf 72 600 Td ({shown}) Tj ET");
    let page = doc.new_page(Size::A4).unwrap();
    let mut page_obj: PdfObject = page.object();
    let mut fonts = doc.new_dict().unwrap();
    fonts.dict_put("F1", font.clone()).unwrap();
    if extra == Extra::UnselectedFont {
        fonts.dict_put("F2", other).unwrap();
    }
    if let Extra::HiddenState(text) = extra {
        let mut form_fonts = doc.new_dict().unwrap();
        form_fonts.dict_put("F1", font).unwrap();
        let mut form_res = doc.new_dict().unwrap();
        form_res.dict_put("Font", form_fonts).unwrap();
        let mut states = doc.new_dict().unwrap();
        for (state, content) in [("Off", String::new()), ("Yes", format!("BT /F1 48 Tf 0 10 Td ({text}) Tj ET"))] {
            let mut form = doc.add_stream(&Buffer::from_bytes(content.as_bytes()).unwrap(), None, false).unwrap();
            form.dict_put("Type", doc.new_name("XObject").unwrap()).unwrap();
            form.dict_put("Subtype", doc.new_name("Form").unwrap()).unwrap();
            form.dict_put("BBox", doc.new_array().unwrap()).unwrap();
            let mut bbox = form.get_dict("BBox").unwrap().unwrap();
            for v in [0, 0, 200, 80] {
                bbox.array_push(doc.new_int(v).unwrap()).unwrap();
            }
            form.dict_put("Resources", form_res.clone()).unwrap();
            states.dict_put(state, form).unwrap();
        }
        let mut ap = doc.new_dict().unwrap();
        ap.dict_put("N", states).unwrap();
        let mut annot = doc.new_dict().unwrap();
        annot.dict_put("Type", doc.new_name("Annot").unwrap()).unwrap();
        annot.dict_put("Subtype", doc.new_name("Square").unwrap()).unwrap();
        let mut rect = doc.new_array().unwrap();
        for v in [72, 300, 272, 380] {
            rect.array_push(doc.new_int(v).unwrap()).unwrap();
        }
        annot.dict_put("Rect", rect).unwrap();
        annot.dict_put("AS", doc.new_name("Off").unwrap()).unwrap();
        annot.dict_put("AP", ap).unwrap();
        let annot = doc.add_object(&annot).unwrap();
        let mut annots = doc.new_array().unwrap();
        annots.array_push(annot).unwrap();
        page_obj.dict_put("Annots", annots).unwrap();
    }
    finish_page(&mut doc, &mut page_obj, fonts, &content, path);
}

#[test]
fn a_type1_font_becomes_a_cff_subset_of_the_glyphs_shown_rendering_the_same() {
    let s = Scratch::new("compress-type1");
    let input = s.path("t1.pdf");
    let (program, l1, l2) = type1_program();
    pdf_with_type1(&input, &program, l1, l2, "ABBA", Extra::Nothing);
    assert_eq!(font_programs(&input).0, 1);
    let before = grey_pixels(&input, 72.0);
    assert!(before[0].iter().any(|&p| p < 128), "the test font draws");
    for level in LEVELS {
        let out = s.path("out.pdf");
        compress_at(&input, &out, level);
        let (type1, cff) = font_programs(&out);
        assert_eq!((type1, cff.len()), (0, 1), "{level:?}: the Type 1 program is replaced by one CFF program");
        assert_eq!(cff_glyph_count(&cff[0]), 3, "{level:?}: .notdef, A and B kept, C and D dropped");
        assert!(cff[0].len() < program.len() / 2, "{level:?}: {} -> {} bytes", program.len(), cff[0].len());
        assert!(grey_pixels(&out, 72.0) == before, "{level:?}: a rendered pixel changed");
        assert!(grey_pixels(&out, 300.0) == grey_pixels(&input, 300.0), "{level:?}: a pixel changed at 300 dpi");
    }
}

#[test]
fn a_type1_program_whose_font_no_content_selects_keeps_every_glyph() {
    let s = Scratch::new("compress-type1-unselected");
    let input = s.path("t1.pdf");
    let (program, l1, l2) = type1_program();
    pdf_with_type1(&input, &program, l1, l2, "AB", Extra::UnselectedFont);
    let out = s.path("out.pdf");
    compress_at(&input, &out, CompressLevel::Light);
    let (type1, cff) = font_programs(&out);
    assert_eq!((type1, cff.len()), (0, 1));
    assert_eq!(cff_glyph_count(&cff[0]), 5, "every glyph kept");
    assert!(grey_pixels(&out, 72.0) == grey_pixels(&input, 72.0), "a rendered pixel changed");
}

#[test]
fn glyphs_of_an_annotation_state_not_shown_are_kept() {
    let s = Scratch::new("compress-type1-state");
    let input = s.path("t1.pdf");
    let (program, l1, l2) = type1_program();
    pdf_with_type1(&input, &program, l1, l2, "A", Extra::HiddenState("D"));
    let out = s.path("out.pdf");
    compress_at(&input, &out, CompressLevel::Balanced);
    let (type1, cff) = font_programs(&out);
    assert_eq!((type1, cff.len()), (0, 1));
    assert_eq!(cff_glyph_count(&cff[0]), 3, ".notdef, A shown and D of the /Yes state; not B or C");
    assert!(grey_pixels(&out, 72.0) == grey_pixels(&input, 72.0), "a rendered pixel changed");
}

#[test]
fn a_type1_font_that_cannot_be_parsed_is_kept_as_it_is() {
    let s = Scratch::new("compress-type1-bad");
    let input = s.path("bad.pdf");
    let (mut program, l1, l2) = type1_program();
    // The private part's dictionary keys decrypt to nothing readable.
    for b in &mut program[l1 + 4..l1 + l2] {
        *b = b.wrapping_mul(31).wrapping_add(7);
    }
    pdf_with_type1(&input, &program, l1, l2, "AB", Extra::Nothing);
    for level in LEVELS {
        let out = s.path("out.pdf");
        compress_at(&input, &out, level);
        assert_eq!(font_programs(&out).0, 1, "{level:?}: the program is kept");
        assert!(grey_pixels(&out, 72.0) == grey_pixels(&input, 72.0), "{level:?}: a rendered pixel changed");
    }
}

#[test]
#[cfg_attr(not(has_corpus), ignore = "corpus missing: run scripts/fetch-corpus.sh or set CORPUS_DIR")]
fn corpus_files_with_type1_fonts_get_smaller_render_identically_and_keep_levels_ordered() {
    let names =
        ["latex-form-fields.pdf", "latex-outline-4-pages.pdf", "latex-multicolumn.pdf", "with-file-attachment.pdf"];
    let s = Scratch::new("compress-type1-corpus");
    for name in names {
        let input = corpus_file(name);
        let in_bytes = std::fs::metadata(&input).unwrap().len();
        let (in_type1, _) = font_programs(&input);
        assert!(in_type1 > 0, "{name} embeds Type 1 fonts");
        let (in_pixels, in_text) = (grey_pixels(&input, 100.0), text(&input));
        let mut sizes = Vec::new();
        for level in LEVELS {
            let out = s.path(&format!("{level:?}.pdf"));
            sizes.push(compress_at(&input, &out, level));
            let (type1, cff) = font_programs(&out);
            assert!(type1 < in_type1 && !cff.is_empty(), "{name} {level:?}: Type 1 fonts converted");
            assert!(grey_pixels(&out, 100.0) == in_pixels, "{name} {level:?}: a rendered pixel changed");
            assert_eq!(text(&out), in_text, "{name} {level:?}: pdftotext's text");
        }
        let [light, balanced, strong] = sizes[..] else { unreachable!() };
        assert!(light * 10 < in_bytes * 8, "{name}: light {light} not 20% below the input {in_bytes}");
        assert!(balanced <= light && strong <= balanced, "{name}: levels {sizes:?}");
    }
}

/// The BaseFont names of the fonts of `path`.
fn base_fonts(path: &Path) -> Vec<String> {
    let doc = PdfDocument::open(path.to_str().unwrap()).unwrap();
    let mut names = Vec::new();
    for i in 1..doc.count_objects().unwrap() {
        let Ok(obj) = doc.new_indirect(i as i32, 0) else { continue };
        let Ok(Some(font)) = obj.resolve() else { continue };
        if font.is_dict().unwrap_or(false)
            && font.get_dict("Type").ok().flatten().map(|t| t.to_string()) == Some("/Font".into())
        {
            names.push(font.get_dict("BaseFont").unwrap().unwrap().to_string());
        }
    }
    names.sort();
    names
}

#[test]
fn a_simple_fonts_whole_cff_program_is_cut_to_the_glyphs_shown_at_every_level_rendering_the_same() {
    // Ghostscript embeds whole CFF programs (/FontFile3 /Type1C) when told not to subset:
    // MuPDF's pdf_subset_fonts takes only CID-keyed CFF, so these were kept whole.
    let s = Scratch::new("compress-cff-simple");
    let ps = s.path("t.ps");
    std::fs::write(
        &ps,
        "%!PS\n/NimbusSans-Regular findfont 24 scalefont setfont 72 700 moveto (Hello subset world) show\n\
         /NimbusRoman-Regular findfont 18 scalefont setfont 72 650 moveto (Caf\\351 na\\357ve) show showpage\n",
    )
    .unwrap();
    let input = s.path("in.pdf");
    let st = common::tool("gs")
        .args([
            "-q",
            "-dNOPAUSE",
            "-dBATCH",
            "-dSAFER",
            "-sDEVICE=pdfwrite",
            "-dSubsetFonts=false",
            "-dEmbedAllFonts=true",
        ])
        .arg(format!("-sOutputFile={}", input.display()))
        .arg(&ps)
        .status()
        .unwrap();
    assert!(st.success(), "gs made the input");
    let (_, whole) = font_programs(&input);
    assert_eq!(whole.len(), 2, "two whole CFF programs");
    let whole_bytes: usize = whole.iter().map(Vec::len).sum();
    let (before, text_before) = (grey_pixels(&input, 150.0), text(&input));
    for level in LEVELS {
        let out = s.path("out.pdf");
        compress_at(&input, &out, level);
        let (type1, cut) = font_programs(&out);
        assert_eq!((type1, cut.len()), (0, 2), "{level:?}");
        let cut_bytes: usize = cut.iter().map(Vec::len).sum();
        assert!(cut_bytes < whole_bytes / 4, "{level:?}: {whole_bytes} -> {cut_bytes} bytes");
        assert!(grey_pixels(&out, 150.0) == before, "{level:?}: a rendered pixel changed");
        assert_eq!(text(&out), text_before, "{level:?}");
        for name in base_fonts(&out) {
            assert!(
                name.as_bytes()[7] == b'+' && name[1..7].bytes().all(|b| b.is_ascii_uppercase()),
                "{level:?}: {name} has a subset tag"
            );
        }
    }
}

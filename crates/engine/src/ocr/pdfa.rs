//! Searchable PDFs as PDF/A-2b (ISO 19005-2, level B: the pages' appearance is preserved):
//! the `pdfa: "2b"` option of `ocr` (output `searchable_pdf`) and `searchable_pdf`, an extension
//! (docs/ocr.md, "PDF/A-2b").
//!
//! [`problems`] is run on the input before any page is read: what PDF/A-2b forbids and this
//! module does not convert refuses the job at once (`pdfa_unsupported`, the message naming
//! each kind of problem and where it was first seen). [`convert`] runs just before the save
//! and makes what can be made without changing how a page looks:
//!
//! - `/OutputIntents`: one `GTS_PDFA1` intent whose profile is MuPDF's built-in sRGB ICC
//!   profile (the one its DeviceRGB uses), so DeviceRGB and DeviceGray are allowed;
//! - `/Metadata`: an XMP packet (`pdfaid:part` 2, `pdfaid:conformance` B) whose Dublin Core,
//!   XMP and PDF properties equal the Info dictionary's, which is rewritten to the entries that
//!   have such a property (Title, Author, Subject, Keywords, Creator kept; Producer `docproc`;
//!   CreationDate kept when it parses, else now; ModDate now);
//! - a trailer `/ID`, a header version of at most 1.7 (csrc/pdfa.c), no encryption (the save
//!   writes none; encrypted inputs are refused as for every operation);
//! - images' `/Interpolate true` removed (a rendering hint PDF/A forbids) and Link
//!   annotations given the Print flag (they draw nothing).
//!
//! The text layer's own font is a compliant embedded font (glyphless_font.rs; every CID maps
//! to its one glyph, not to `.notdef`). What is checked and refused is listed in [`problems`];
//! what is neither converted nor checked (implementation limits, embedded font programs'
//! own consistency, form XObjects' content) is listed in docs/ocr.md.

use std::collections::HashSet;
use std::ffi::{c_char, c_int, c_uchar, c_void, CStr};
use std::time::{SystemTime, UNIX_EPOCH};

use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::Buffer;

use crate::error::{EngineError, ErrorCode, MuPdfResultExt, Result};
use crate::pdf::content_syntax::{page_content, skip_inline_image};
use crate::pdf::graft::{context, raw};
use crate::pdf::lexer::{Kind, Lexer};

extern "C" {
    fn engine_pdfa_srgb_icc(ctx: *mut c_void, data: *mut *const c_uchar) -> usize;
    fn engine_pdfa_header_and_id(ctx: *mut c_void, trailer: *mut c_void, err: *mut c_char, errlen: c_int) -> c_int;
}

/// What `Producer` and `xmp:CreatorTool`-free metadata name as the writer.
pub const PRODUCER: &str = "docproc";

/// The conformance levels offered; only 2b.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PdfaLevel {
    /// PDF/A-2b.
    A2b,
}

/// Annotation types PDF/A-2 forbids (6.3.1), and FileAttachment, whose file would have to be
/// PDF/A itself.
const FORBIDDEN_ANNOTS: &[&[u8]] = &[b"Sound", b"Movie", b"Screen", b"3D", b"RichMedia", b"FileAttachment"];
/// Actions PDF/A-2 forbids (6.5.1).
const FORBIDDEN_ACTIONS: &[&[u8]] = &[
    b"Launch",
    b"Sound",
    b"Movie",
    b"ResetForm",
    b"ImportData",
    b"Hide",
    b"SetOCGState",
    b"Rendition",
    b"Trans",
    b"GoTo3DView",
    b"JavaScript",
    b"RichMediaExecute",
];
/// The blend modes of ISO 32000-1, the only ones PDF/A-2 allows (6.2.10).
const BLEND_MODES: &[&[u8]] = &[
    b"Normal",
    b"Compatible",
    b"Multiply",
    b"Screen",
    b"Overlay",
    b"Darken",
    b"Lighten",
    b"ColorDodge",
    b"ColorBurn",
    b"HardLight",
    b"SoftLight",
    b"Difference",
    b"Exclusion",
    b"Hue",
    b"Saturation",
    b"Color",
    b"Luminosity",
];
/// Annotation flags: Invisible, Hidden, Print, NoView, ToggleNoView.
const F_INVISIBLE: i32 = 1;
const F_HIDDEN: i32 = 2;
const F_PRINT: i32 = 4;
const F_NOVIEW: i32 = 32;
const F_TOGGLENOVIEW: i32 = 256;

fn name_is(obj: &Option<PdfObject>, name: &[u8]) -> bool {
    obj.as_ref().is_some_and(|o| o.is_name().unwrap_or(false) && o.as_name().map(|n| n == name).unwrap_or(false))
}

fn name_of(obj: &Option<PdfObject>) -> Option<Vec<u8>> {
    obj.as_ref().filter(|o| o.is_name().unwrap_or(false)).and_then(|o| o.as_name().ok())
}

fn get(obj: &PdfObject, key: &str) -> Option<PdfObject> {
    obj.get_dict(key).ok().flatten().filter(|o| !o.is_null().unwrap_or(true))
}

fn is_dict(obj: &PdfObject) -> bool {
    obj.is_dict().unwrap_or(false)
}

/// Values of a dictionary (an empty list for anything else).
fn values(dict: &PdfObject) -> Vec<PdfObject> {
    if !is_dict(dict) {
        return Vec::new();
    }
    let n = dict.dict_len().unwrap_or(0);
    (0..n).filter_map(|i| dict.get_dict_val(i as i32).ok().flatten()).collect()
}

/// Items of an array (an empty list for anything else).
fn items(array: &PdfObject) -> Vec<PdfObject> {
    if !array.is_array().unwrap_or(false) {
        return Vec::new();
    }
    let n = array.len().unwrap_or(0);
    (0..n).filter_map(|i| array.get_array(i as i32).ok().flatten()).collect()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The problems found, one entry per kind (with where it was first seen), in the order met.
#[derive(Default)]
struct Findings {
    kinds: Vec<(String, String)>,
    /// Dictionaries and streams already walked (by object number; direct ones are walked
    /// each time they are met, bounded by their container).
    seen: HashSet<i32>,
}

impl Findings {
    fn add(&mut self, kind: &str, at: impl FnOnce() -> String) {
        if !self.kinds.iter().any(|(k, _)| k == kind) {
            self.kinds.push((kind.to_string(), at()));
        }
    }

    /// False when `obj` is indirect and was walked before.
    fn first_visit(&mut self, obj: &PdfObject) -> bool {
        if obj.is_indirect().unwrap_or(false) {
            if let Ok(num) = obj.as_indirect() {
                return self.seen.insert(num);
            }
        }
        true
    }
}

/// What keeps `doc` from becoming PDF/A-2b here: one line per kind of problem, empty when
/// [`convert`] can make it PDF/A-2b.
pub fn problems(doc: &PdfDocument) -> Result<Vec<String>> {
    let mut f = Findings::default();
    let catalog = doc.catalog().ctx("reading the catalog")?;
    if get(&catalog, "AA").is_some() {
        f.add("additional actions (/AA)", || "the document catalog".into());
    }
    if get(&catalog, "Requirements").is_some() {
        f.add("a /Requirements entry", || "the document catalog".into());
    }
    if let Some(names) = get(&catalog, "Names") {
        if get(&names, "JavaScript").is_some() {
            f.add("JavaScript", || "the document's name tree".into());
        }
        if get(&names, "EmbeddedFiles").is_some() {
            f.add("embedded files", || "the document's name tree".into());
        }
    }
    if let Some(action) = get(&catalog, "OpenAction") {
        check_action(&mut f, &action, "the open action");
    }
    if let Some(form) = get(&catalog, "AcroForm") {
        if get(&form, "XFA").is_some() {
            f.add("an XFA form", || "the interactive form".into());
        }
        if get(&form, "NeedAppearances").is_some_and(|v| v.as_bool().unwrap_or(false)) {
            f.add("form fields without appearances (/NeedAppearances true)", || "the interactive form".into());
        }
    }
    if let Some(oc) = get(&catalog, "OCProperties") {
        let configs = get(&oc, "D").into_iter().chain(get(&oc, "Configs").map(|c| items(&c)).unwrap_or_default());
        for config in configs {
            if get(&config, "AS").is_some() || get(&config, "Name").is_none() {
                f.add("optional content configurations with /AS or without /Name", || "/OCProperties".into());
            }
        }
    }
    if let Some(outlines) = get(&catalog, "Outlines") {
        check_outline(&mut f, &outlines, 0);
    }
    let count = doc.page_count().ctx("counting pages")?;
    for i in 0..count {
        let page = doc.find_page(i).ctx("finding the page")?;
        let at = || format!("page {}", i + 1);
        if get(&page, "AA").is_some() {
            f.add("additional actions (/AA)", at);
        }
        if let Some(res) = page.get_dict_inheritable("Resources").ctx("reading resources")? {
            check_resources(&mut f, &res, &at(), 0);
        }
        if let Some(annots) = get(&page, "Annots") {
            for annot in items(&annots) {
                check_annotation(&mut f, &annot, &at());
            }
        }
        if let Some(content) = page_content(&page) {
            if uses_device_cmyk(&content) {
                f.add("DeviceCMYK colour with an sRGB output intent", at);
            }
        }
    }
    Ok(f.kinds.into_iter().map(|(kind, at)| format!("{kind} ({at})")).collect())
}

/// Whether page content sets a DeviceCMYK colour (`k`, `K`, or the colour space by name,
/// inline images' `/CMYK` included).
fn uses_device_cmyk(content: &[u8]) -> bool {
    let mut lexer = Lexer::new(content);
    while let Some(Ok(token)) = lexer.next() {
        match token.kind {
            Kind::Word if token.text == b"k" || token.text == b"K" => return true,
            Kind::Name if token.text == b"/DeviceCMYK" || token.text == b"/CMYK" => return true,
            Kind::Word if token.text == b"ID" => match skip_inline_image(content, lexer.pos) {
                Some(pos) => lexer.pos = pos,
                None => return false,
            },
            _ => {}
        }
    }
    false
}

fn check_action(f: &mut Findings, action: &PdfObject, at: &str) {
    let mut next = Some(action.clone());
    // An action's /Next chain (a dictionary or an array of them), bounded.
    for _ in 0..64 {
        let Some(a) = next.take() else { return };
        for a in if a.is_array().unwrap_or(false) { items(&a) } else { vec![a] } {
            if let Some(kind) = name_of(&get(&a, "S")) {
                if FORBIDDEN_ACTIONS.contains(&kind.as_slice()) {
                    f.add(&format!("{} actions", text(&kind)), || at.to_string());
                }
            }
            next = get(&a, "Next");
        }
    }
}

fn check_outline(f: &mut Findings, first: &PdfObject, depth: usize) {
    let mut item = get(first, "First");
    let mut walked = 0;
    while let Some(it) = item {
        if depth > 32 || walked > 100_000 || !f.first_visit(&it) {
            return;
        }
        walked += 1;
        if let Some(a) = get(&it, "A") {
            check_action(f, &a, "the outline");
        }
        check_outline(f, &it, depth + 1);
        item = get(&it, "Next");
    }
}

fn check_annotation(f: &mut Findings, annot: &PdfObject, at: &str) {
    if !f.first_visit(annot) {
        return;
    }
    let subtype = name_of(&get(annot, "Subtype")).unwrap_or_default();
    let here = || format!("{at}, a {} annotation", text(&subtype));
    if FORBIDDEN_ANNOTS.contains(&subtype.as_slice()) {
        f.add(&format!("{} annotations", text(&subtype)), here);
        return;
    }
    if get(annot, "AA").is_some() {
        f.add("additional actions (/AA)", here);
    }
    if let Some(a) = get(annot, "A") {
        check_action(f, &a, &here());
    }
    if subtype == b"Popup" {
        return;
    }
    // A link draws nothing of its own: convert gives it the Print flag.
    let flags = get(annot, "F").and_then(|v| v.as_int().ok()).unwrap_or(0);
    let unprinted = flags & F_PRINT == 0 && subtype != b"Link";
    if flags & (F_INVISIBLE | F_HIDDEN | F_NOVIEW | F_TOGGLENOVIEW) != 0 || unprinted {
        f.add("annotations that are hidden or not printed", here);
    }
    if subtype == b"Link" {
        return;
    }
    match get(annot, "AP") {
        Some(ap) => {
            if get(&ap, "R").is_some() || get(&ap, "D").is_some() {
                f.add("annotation appearances other than the normal one", here);
            }
            if let Some(n) = get(&ap, "N") {
                // A stream, or a dictionary of states (check boxes, radio buttons).
                let streams = if n.is_stream().unwrap_or(false) { vec![n] } else { values(&n) };
                for s in streams {
                    check_xobject(f, &s, &here(), 1);
                }
            }
        }
        None => {
            let zero_area = get(annot, "Rect")
                .map(|r| items(&r).iter().map(|v| v.as_float().unwrap_or(0.0)).collect::<Vec<_>>())
                .is_some_and(|r| r.len() == 4 && ((r[2] - r[0]).abs() < 1e-3 || (r[3] - r[1]).abs() < 1e-3));
            if !zero_area {
                f.add("annotations without an appearance", here);
            }
        }
    }
}

fn check_resources(f: &mut Findings, res: &PdfObject, at: &str, depth: usize) {
    if depth > 16 || !is_dict(res) || !f.first_visit(res) {
        return;
    }
    if let Some(fonts) = get(res, "Font") {
        for font in values(&fonts) {
            check_font(f, &font, at, depth);
        }
    }
    if let Some(xobjects) = get(res, "XObject") {
        for x in values(&xobjects) {
            check_xobject(f, &x, at, depth);
        }
    }
    if let Some(states) = get(res, "ExtGState") {
        for gs in values(&states) {
            check_ext_gstate(f, &gs, at, depth);
        }
    }
    if let Some(spaces) = get(res, "ColorSpace") {
        for cs in values(&spaces) {
            if colour_space_is_cmyk(&cs, 0) {
                f.add("DeviceCMYK colour with an sRGB output intent", || at.to_string());
            }
        }
    }
    if let Some(patterns) = get(res, "Pattern") {
        for p in values(&patterns) {
            if let Some(r) = get(&p, "Resources") {
                check_resources(f, &r, at, depth + 1);
            }
        }
    }
}

fn check_font(f: &mut Findings, font: &PdfObject, at: &str, depth: usize) {
    if !f.first_visit(font) {
        return;
    }
    let subtype = get(font, "Subtype");
    if name_is(&subtype, b"Type3") {
        if let Some(r) = get(font, "Resources") {
            check_resources(f, &r, at, depth + 1);
        }
        return;
    }
    let descendant = if name_is(&subtype, b"Type0") {
        get(font, "DescendantFonts").and_then(|d| items(&d).into_iter().next())
    } else {
        Some(font.clone())
    };
    let embedded = descendant.and_then(|d| get(&d, "FontDescriptor")).is_some_and(|fd| {
        get(&fd, "FontFile").is_some() || get(&fd, "FontFile2").is_some() || get(&fd, "FontFile3").is_some()
    });
    if !embedded {
        let name = name_of(&get(font, "BaseFont")).map(|n| text(&n)).unwrap_or_else(|| "unnamed".into());
        f.add("fonts that are not embedded", || format!("{at}, font {name}"));
    }
}

fn check_stream_filters(f: &mut Findings, stream: &PdfObject, at: &str) {
    if get(stream, "F").is_some() {
        f.add("streams in external files", || at.to_string());
    }
    let filters = match get(stream, "Filter") {
        Some(v) if v.is_array().unwrap_or(false) => items(&v),
        Some(v) => vec![v],
        None => Vec::new(),
    };
    if filters.iter().any(|v| name_is(&Some(v.clone()), b"LZWDecode") || name_is(&Some(v.clone()), b"LZW")) {
        f.add("LZW-compressed streams", || at.to_string());
    }
}

fn check_xobject(f: &mut Findings, x: &PdfObject, at: &str, depth: usize) {
    if !x.is_stream().unwrap_or(false) || !f.first_visit(x) {
        return;
    }
    check_stream_filters(f, x, at);
    let subtype = get(x, "Subtype");
    if name_is(&subtype, b"PS") || name_is(&get(x, "Subtype2"), b"PS") || get(x, "PS").is_some() {
        f.add("PostScript XObjects", || at.to_string());
    }
    if get(x, "OPI").is_some() {
        f.add("OPI comments", || at.to_string());
    }
    if name_is(&subtype, b"Image") {
        if get(x, "Alternates").is_some() {
            f.add("alternate images", || at.to_string());
        }
        if get(x, "ColorSpace").is_some_and(|cs| colour_space_is_cmyk(&cs, 0)) {
            f.add("DeviceCMYK colour with an sRGB output intent", || format!("{at}, an image"));
        }
        if let Some(mask) = get(x, "SMask") {
            check_xobject(f, &mask, at, depth + 1);
        }
    } else if name_is(&subtype, b"Form") {
        if get(x, "Ref").is_some() {
            f.add("reference XObjects", || at.to_string());
        }
        if let Some(r) = get(x, "Resources") {
            check_resources(f, &r, at, depth + 1);
        }
    }
}

fn check_ext_gstate(f: &mut Findings, gs: &PdfObject, at: &str, depth: usize) {
    if !f.first_visit(gs) {
        return;
    }
    if let Some(bm) = get(gs, "BM") {
        let modes = if bm.is_array().unwrap_or(false) { items(&bm) } else { vec![bm] };
        for m in modes {
            if let Some(name) = name_of(&Some(m)) {
                if !BLEND_MODES.contains(&name.as_slice()) {
                    f.add("blend modes PDF/A does not allow", || format!("{at}, /{}", text(&name)));
                }
            }
        }
    }
    if get(gs, "TR").is_some() || get(gs, "TR2").is_some_and(|v| !name_is(&Some(v), b"Default")) {
        f.add("transfer functions", || at.to_string());
    }
    if let Some(mask) = get(gs, "SMask").filter(is_dict) {
        if let Some(g) = get(&mask, "G") {
            check_xobject(f, &g, at, depth + 1);
        }
    }
}

/// Whether a colour space is DeviceCMYK, or an Indexed, Separation or DeviceN space over it.
fn colour_space_is_cmyk(cs: &PdfObject, depth: usize) -> bool {
    if depth > 4 {
        return false;
    }
    if cs.is_name().unwrap_or(false) {
        return name_is(&Some(cs.clone()), b"DeviceCMYK") || name_is(&Some(cs.clone()), b"CMYK");
    }
    let parts = items(cs);
    let Some(family) = parts.first().and_then(|p| name_of(&Some(p.clone()))) else { return false };
    match family.as_slice() {
        b"Indexed" | b"I" => parts.get(1).is_some_and(|b| colour_space_is_cmyk(b, depth + 1)),
        b"Separation" | b"DeviceN" => parts.get(2).is_some_and(|b| colour_space_is_cmyk(b, depth + 1)),
        _ => false,
    }
}

/// Makes `doc` PDF/A-2b, as the module's documentation says; call after [`problems`] found
/// none and every change to the pages is made, just before the save.
pub fn convert(doc: &mut PdfDocument, level: PdfaLevel, now: SystemTime) -> Result<()> {
    let PdfaLevel::A2b = level;
    let mut trailer = doc.trailer().ctx("reading the trailer")?;
    let mut err = [0 as c_char; 512];
    if unsafe { engine_pdfa_header_and_id(context(), raw(&trailer), err.as_mut_ptr(), err.len() as c_int) } != 0 {
        let msg = unsafe { CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
        return Err(EngineError::new(ErrorCode::EngineError, format!("setting the header and /ID: {msg}")));
    }
    fix_pages(doc)?;
    let mut catalog = doc.catalog().ctx("reading the catalog")?;
    let intent = output_intent(doc)?;
    let mut intents = doc.new_array().ctx("output intents")?;
    intents.array_push(intent).ctx("output intents")?;
    catalog.dict_put("OutputIntents", intents).ctx("output intents")?;

    let info = Info::read(&trailer, now);
    let info_dict = info.write(doc)?;
    trailer.dict_put("Info", info_dict).ctx("writing the Info dictionary")?;
    let xmp = info.xmp();
    let dict = doc
        .new_object_from_str(&format!("<< /Type /Metadata /Subtype /XML /Length {} >>", xmp.len()))
        .ctx("metadata")?;
    let metadata = doc
        .add_stream(&Buffer::from_bytes(xmp.as_bytes()).ctx("buffer")?, Some(&dict), false)
        .ctx("adding the metadata")?;
    catalog.dict_put("Metadata", metadata).ctx("adding the metadata")?;
    Ok(())
}

/// Removes `/Interpolate` from every image (soft masks and images of patterns, forms and
/// appearances included) and gives Link annotations the Print flag.
fn fix_pages(doc: &mut PdfDocument) -> Result<()> {
    let objects = doc.count_objects().ctx("counting objects")?;
    for num in 1..objects as i32 {
        let Ok(mut obj) = doc.new_indirect(num, 0) else { continue };
        if obj.is_stream().unwrap_or(false)
            && name_is(&get(&obj, "Subtype"), b"Image")
            && get(&obj, "Interpolate").is_some()
        {
            obj.dict_delete("Interpolate").ctx("image interpolation")?;
        }
    }
    let count = doc.page_count().ctx("counting pages")?;
    for i in 0..count {
        let page = doc.find_page(i).ctx("finding the page")?;
        if let Some(annots) = get(&page, "Annots") {
            for mut annot in items(&annots) {
                if name_is(&get(&annot, "Subtype"), b"Link") {
                    let flags = get(&annot, "F").and_then(|v| v.as_int().ok()).unwrap_or(0);
                    annot.dict_put("F", PdfObject::new_int(flags | F_PRINT).ctx("flags")?).ctx("flags")?;
                }
            }
        }
    }
    Ok(())
}

/// The `GTS_PDFA1` output intent with MuPDF's sRGB profile.
fn output_intent(doc: &mut PdfDocument) -> Result<PdfObject> {
    let mut data: *const c_uchar = std::ptr::null();
    let len = unsafe { engine_pdfa_srgb_icc(context(), &mut data) };
    if len == 0 || data.is_null() {
        return Err(EngineError::new(ErrorCode::EngineError, "MuPDF has no built-in sRGB ICC profile"));
    }
    // SAFETY: the profile lives in MuPDF's colour context for the whole process.
    let icc = unsafe { std::slice::from_raw_parts(data, len) }.to_vec();
    let dict = doc.new_object_from_str("<< /N 3 >>").ctx("ICC profile")?;
    let profile = doc.add_stream(&Buffer::from_bytes(&icc).ctx("buffer")?, Some(&dict), false).ctx("ICC profile")?;
    let mut intent = doc
        .new_object_from_str(
            "<< /Type /OutputIntent /S /GTS_PDFA1 /OutputConditionIdentifier (sRGB IEC61966-2.1) \
             /RegistryName (http://www.color.org) /Info (sRGB IEC61966-2.1) >>",
        )
        .ctx("output intent")?;
    intent.dict_put("DestOutputProfile", profile).ctx("output intent")?;
    Ok(intent)
}

/// A date as PDF and XMP write it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Date {
    year: i32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    /// Offset from UTC in minutes.
    offset: i32,
}

impl Date {
    /// `now` in UTC.
    pub fn utc(now: SystemTime) -> Self {
        let secs = now.duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0);
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as i32;
        Date {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
            offset: 0,
        }
    }

    /// A PDF date string (`D:YYYYMMDDHHmmSSOHH'mm'`, the later parts optional); `None` when
    /// it does not parse or is out of range.
    pub fn parse_pdf(s: &str) -> Option<Self> {
        let s = s.trim().strip_prefix("D:").unwrap_or(s.trim());
        let digits = |from: usize, len: usize| -> Option<u32> {
            let part = s.get(from..from + len)?;
            part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
        };
        let year = digits(0, 4)? as i32;
        let field = |from: usize, default: u32| if s.len() > from { digits(from, 2) } else { Some(default) };
        let (month, day) = (field(4, 1)?, field(6, 1)?);
        let (hour, minute, second) = (field(8, 0)?, field(10, 0)?, field(12, 0)?);
        let offset = match s.as_bytes().get(14) {
            None | Some(b'Z') => 0,
            Some(&sign @ (b'+' | b'-')) => {
                let hh = digits(15, 2)? as i32;
                let mm = s
                    .get(17..)
                    .map(|r| r.trim_start_matches('\''))
                    .and_then(|r| r.get(..2))
                    .map_or(Some(0), |r| if r.bytes().all(|c| c.is_ascii_digit()) { r.parse().ok() } else { None })?;
                let v = hh * 60 + mm;
                if sign == b'-' {
                    -v
                } else {
                    v
                }
            }
            Some(_) => return None,
        };
        let ok = (1..=12).contains(&month)
            && (1..=31).contains(&day)
            && hour < 24
            && minute < 60
            && second < 60
            && offset.abs() < 24 * 60;
        ok.then_some(Date { year, month, day, hour, minute, second, offset })
    }

    fn offset_parts(&self) -> (char, i32, i32) {
        (if self.offset < 0 { '-' } else { '+' }, self.offset.abs() / 60, self.offset.abs() % 60)
    }

    /// `D:YYYYMMDDHHmmSS+HH'mm'`.
    pub fn pdf(&self) -> String {
        let (sign, h, m) = self.offset_parts();
        format!(
            "D:{:04}{:02}{:02}{:02}{:02}{:02}{sign}{h:02}'{m:02}'",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }

    /// ISO 8601, as XMP writes dates.
    pub fn xmp(&self) -> String {
        let (sign, h, m) = self.offset_parts();
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{sign}{h:02}:{m:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// The document information PDF/A keeps, in the Info dictionary and in XMP alike.
struct Info {
    title: Option<String>,
    author: Option<String>,
    subject: Option<String>,
    keywords: Option<String>,
    creator: Option<String>,
    created: Date,
    modified: Date,
}

impl Info {
    fn read(trailer: &PdfObject, now: SystemTime) -> Self {
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

    fn write(&self, doc: &mut PdfDocument) -> Result<PdfObject> {
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
    fn xmp(&self) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_pdf_date_with_its_offset_becomes_the_same_instant_in_xmp() {
        let d = Date::parse_pdf("D:20240229235958+05'30'").unwrap();
        assert_eq!(d.xmp(), "2024-02-29T23:59:58+05:30");
        assert_eq!(d.pdf(), "D:20240229235958+05'30'");
        assert_eq!(Date::parse_pdf("D:2019").unwrap().xmp(), "2019-01-01T00:00:00+00:00");
        assert_eq!(Date::parse_pdf("D:20190102030405Z").unwrap().xmp(), "2019-01-02T03:04:05+00:00");
        assert_eq!(Date::parse_pdf("D:20190102030405-08'00").unwrap().xmp(), "2019-01-02T03:04:05-08:00");
    }

    #[test]
    fn dates_that_do_not_parse_are_refused() {
        for bad in ["", "D:", "yesterday", "D:20191302", "D:20190132", "D:2019010225", "D:20190102030405X"] {
            assert_eq!(Date::parse_pdf(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_utc_date_of_a_unix_time_is_the_calendar_one() {
        let t = UNIX_EPOCH + Duration::from_secs(1_709_251_199); // 2024-02-29T23:59:59Z
        assert_eq!(Date::utc(t).xmp(), "2024-02-29T23:59:59+00:00");
        assert_eq!(Date::utc(UNIX_EPOCH).pdf(), "D:19700101000000+00'00'");
    }

    #[test]
    fn cmyk_operators_and_names_are_found_in_content_but_not_in_inline_image_data() {
        assert!(uses_device_cmyk(b"q 0 0 0 1 k 0 0 10 10 re f Q"));
        assert!(uses_device_cmyk(b"/DeviceCMYK cs 0 0 0 1 sc"));
        assert!(!uses_device_cmyk(b"q 1 0 0 rg 0 0 10 10 re f Q"));
        assert!(!uses_device_cmyk(b"BI /W 1 /H 1 /CS /G /BPC 8 ID k K EI Q"));
    }
}

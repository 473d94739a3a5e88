//! What PDF/A-2b forbids and [`super::convert`] does not convert: [`problems`] walks the
//! catalog, the outline, every page's resources, annotations and content, and names each kind
//! of problem once, with where it was first seen.

use std::collections::HashSet;

use mupdf::pdf::{PdfDocument, PdfObject};

use super::objects::{
    get, is_dict, items, name_is, name_of, text, values, F_HIDDEN, F_INVISIBLE, F_NOVIEW, F_PRINT, F_TOGGLENOVIEW,
};
use crate::error::{MuPdfResultExt, Result};
use crate::pdf::content_syntax::{page_content, skip_inline_image};
use crate::pdf::lexer::{Kind, Lexer};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmyk_operators_and_names_are_found_in_content_but_not_in_inline_image_data() {
        assert!(uses_device_cmyk(b"q 0 0 0 1 k 0 0 10 10 re f Q"));
        assert!(uses_device_cmyk(b"/DeviceCMYK cs 0 0 0 1 sc"));
        assert!(!uses_device_cmyk(b"q 1 0 0 rg 0 0 10 10 re f Q"));
        assert!(!uses_device_cmyk(b"BI /W 1 /H 1 /CS /G /BPC 8 ID k K EI Q"));
    }
}

//! Values of filled-in form fields whose appearance MuPDF does not draw.
//!
//! A PDF form may store a text field's value (`/V`) with an empty appearance stream and ask
//! the viewer to build it (`NeedAppearances`, as LibreOffice exports forms): Acrobat,
//! poppler and pdf.js then show the value, MuPDF's structured text has nothing there. Such a
//! value is written as a line of text at the field's place; a field whose appearance already
//! put text on the page (any line centred inside its box) is left alone, so nothing is
//! written twice.

use mupdf::pdf::{AnnotationFlags, PdfPage, WidgetType};

use super::{Item, Line, Run, Style};

/// Font size of a field value (the appearance that would carry it is empty).
const FIELD_FONT_SIZE: f32 = 10.0;

/// Text items for the visible text and choice fields of `page` whose value is not on the
/// page's text yet (`items`).
pub(super) fn undrawn_values(page: &PdfPage, items: &[(mupdf::Rect, Item)]) -> Vec<(mupdf::Rect, Item)> {
    let mut out = Vec::new();
    for widget in page.widgets() {
        let kind = widget.r#type().ok();
        if !matches!(kind, Some(WidgetType::Text | WidgetType::Combobox | WidgetType::Listbox)) {
            continue;
        }
        let annot = widget.annotation();
        let hidden = annot.flags().is_ok_and(|f| f.intersects(AnnotationFlags::IS_HIDDEN | AnnotationFlags::NO_VIEW));
        let (Ok(Some(value)), Ok(r)) = (widget.value(), annot.bounds()) else { continue };
        if hidden || value.trim().is_empty() || r.x1 <= r.x0 || r.y1 <= r.y0 {
            continue;
        }
        let drawn = items.iter().any(|(_, item)| match item {
            Item::Text(lines) => lines.iter().any(|l| {
                let (cx, cy) = ((l.x0 + l.x1) / 2.0, (l.y0 + l.y1) / 2.0);
                cx >= r.x0 && cx <= r.x1 && cy >= r.y0 && cy <= r.y1
            }),
            _ => false,
        });
        if drawn {
            continue;
        }
        let lines: Vec<Line> = value
            .lines()
            .filter(|t| !t.trim().is_empty())
            .enumerate()
            .map(|(i, t)| {
                let y0 = r.y0 + i as f32 * FIELD_FONT_SIZE * 1.2;
                Line {
                    x0: r.x0,
                    x1: r.x1,
                    y0,
                    y1: y0 + FIELD_FONT_SIZE * 1.2,
                    size: FIELD_FONT_SIZE,
                    unmapped_glyphs: 0,
                    runs: vec![Run {
                        style: Style {
                            font: "Arial".to_owned(),
                            half_points: (FIELD_FONT_SIZE * 2.0) as u32,
                            bold: false,
                            italic: false,
                            underline: false,
                            strike: false,
                            color: 0,
                        },
                        text: t.trim().to_owned(),
                    }],
                }
            })
            .collect();
        if !lines.is_empty() {
            out.push((r, Item::Text(lines)));
        }
    }
    out
}

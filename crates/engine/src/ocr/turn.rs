//! Pages of a searchable PDF shown upright and straight: the `rotate_pages` and `deskew`
//! options (extensions), applied to the pages OCR read and to nothing else.
//!
//! - **Upright** ([`PageTurn::rotate_pages`]): the turn the OCR found makes the page's text
//!   upright (`ocr::PageText::rotation`, the JSON's `text_rotation`) is added to the page's
//!   `/Rotate`. The page's content and its text layer are not touched: both are in the page's
//!   own (unrotated) user space, which `/Rotate` does not change, so the layer stays on its
//!   words.
//! - **Straight** ([`PageTurn::deskew`]): a page whose lines are turned by
//!   [`DESKEW_FROM_DEGREES`] to [`DESKEW_UP_TO_DEGREES`] from the page's axes has its
//!   original content drawn turned back about the centre of its page box (`q <rotation> cm`
//!   ... `Q`): lossless, the scan is not resampled. The page box keeps its size, so the turned
//!   scan's corners outside it are cut off and thin wedges at its edges show no scan. The text
//!   layer is written after that `Q`, its words carried by the same rotation, so its lines lie
//!   straight along the straightened printed lines.
//!
//! The skew is measured in the page's user space, where the rotation is drawn, so it needs no
//! care for `/Rotate` or the raster's frame: the median angle of the long lines
//! (`ocr::gutter::page_skew`, the rule the reading order uses) from the nearest axis.

use mupdf::pdf::{PdfDocument, PdfObject};
use mupdf::Matrix;

use crate::error::{MuPdfResultExt, Result};
use crate::ocr::searchable::{wrap_contents, TextLayer};
use crate::pdf::tree::page_rotation;

/// What a searchable PDF does to the pages OCR read. The engine's default does nothing; the
/// API's defaults (`rotate_pages` true, `deskew` false) are in `src/domain/operations.ts`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageTurn {
    /// Add the turn that shows the text upright to the page's `/Rotate`.
    pub rotate_pages: bool,
    /// Draw a skewed page's content turned straight, with its text layer.
    pub deskew: bool,
}

/// A skew under this (degrees) is left as it is: the page is straight to the eye.
pub const DESKEW_FROM_DEGREES: f32 = 0.1;
/// A skew over this (degrees) is left as it is: lines that steep are text set at an angle,
/// not a scan placed askew.
pub const DESKEW_UP_TO_DEGREES: f32 = 15.0;

/// The skew of a recognised page in user space (radians, counter-clockwise): the median angle,
/// from the nearest axis, of the lines at least four times as long as high. `to_user` maps
/// the recognition's pixels to user space.
pub fn user_space_skew(text: &ocr::PageText, to_user: &dyn Fn([f32; 2]) -> [f32; 2]) -> f32 {
    let quarter = std::f32::consts::FRAC_PI_2;
    let lines: Vec<ocr::RotRect> = text
        .blocks
        .iter()
        .flat_map(|b| &b.lines)
        .filter_map(|l| {
            let [tl, tr, br, bl] = l.quad.map(to_user);
            let along = [(tr[0] - tl[0] + br[0] - bl[0]) / 2.0, (tr[1] - tl[1] + br[1] - bl[1]) / 2.0];
            let across = [(tl[0] - bl[0] + tr[0] - br[0]) / 2.0, (tl[1] - bl[1] + tr[1] - br[1]) / 2.0];
            let w = along[0].hypot(along[1]);
            if !(w > 0.0) {
                return None;
            }
            let h = ((across[0] * along[1] - across[1] * along[0]) / w).abs();
            let angle = along[1].atan2(along[0]);
            let angle = angle - (angle / quarter).round() * quarter;
            Some(ocr::RotRect { cx: 0.0, cy: 0.0, w, h, angle })
        })
        .collect();
    ocr::gutter::page_skew(&lines)
}

/// The rotation that draws a page skewed by `skew` (radians, user space) straight, about
/// `centre` (user space); `None` when the skew is outside the range deskew corrects.
pub fn deskew_matrix(skew: f32, centre: [f32; 2]) -> Option<Matrix> {
    if !(DESKEW_FROM_DEGREES.to_radians()..=DESKEW_UP_TO_DEGREES.to_radians()).contains(&skew.abs()) {
        return None;
    }
    let (sin, cos) = (-skew).sin_cos();
    let [cx, cy] = centre;
    Some(Matrix::new(cos, sin, -sin, cos, cx - cos * cx + sin * cy, cy - sin * cx - cos * cy))
}

/// Draws the page's content through `m` (`q m cm` ... `Q` around its content streams).
fn draw_turned(doc: &mut PdfDocument, page: &mut PdfObject, m: &Matrix) -> Result<()> {
    let open = format!("q\n{:.6} {:.6} {:.6} {:.6} {:.4} {:.4} cm\n", m.a, m.b, m.c, m.d, m.e, m.f);
    wrap_contents(doc, page, open.as_bytes(), b"Q\n")
}

/// Appends a recognised page's words to its text layer (`to_user` maps the recognition's
/// pixels to user space) and turns the page as `turn` asks; `centre` is the page box's centre
/// in user space.
pub(crate) fn add_turned_page(
    layer: &mut TextLayer,
    doc: &mut PdfDocument,
    page: &mut PdfObject,
    text: &ocr::PageText,
    to_user: &dyn Fn([f32; 2]) -> [f32; 2],
    centre: [f32; 2],
    turn: PageTurn,
) -> Result<()> {
    let straight = if turn.deskew { deskew_matrix(user_space_skew(text, to_user), centre) } else { None };
    match &straight {
        Some(m) => {
            draw_turned(doc, page, m)?;
            let to_straight = |p: [f32; 2]| {
                let [x, y] = to_user(p);
                let (x, y) = m.transform_xy(x, y);
                [x, y]
            };
            layer.add_page(doc, page, text, &to_straight)?;
        }
        None => layer.add_page(doc, page, text, to_user)?,
    }
    if turn.rotate_pages {
        rotate_upright(page, text.rotation)?;
    }
    Ok(())
}

/// Adds `rotation` (clockwise, a multiple of 90) to the page's `/Rotate`.
fn rotate_upright(page: &mut PdfObject, rotation: u32) -> Result<()> {
    if rotation.is_multiple_of(360) {
        return Ok(());
    }
    let turned = (page_rotation(page)? + rotation as i32).rem_euclid(360);
    page.dict_put("Rotate", PdfObject::new_int(turned).ctx("rotating a page")?).ctx("rotating a page")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deskew_turns_only_skews_from_a_tenth_of_a_degree_to_fifteen() {
        for degrees in [0.0f32, 0.05, -0.09, 15.5, -30.0] {
            assert!(deskew_matrix(degrees.to_radians(), [0.0, 0.0]).is_none(), "{degrees}");
        }
        for degrees in [0.1f32, -2.0, 15.0] {
            assert!(deskew_matrix(degrees.to_radians(), [0.0, 0.0]).is_some(), "{degrees}");
        }
    }

    #[test]
    fn the_deskew_rotation_keeps_the_centre_and_lays_a_skewed_line_flat() {
        let skew = 3f32.to_radians();
        let m = deskew_matrix(skew, [300.0, 400.0]).unwrap();
        let (x, y) = m.transform_xy(300.0, 400.0);
        assert!((x - 300.0).abs() < 1e-3 && (y - 400.0).abs() < 1e-3, "{x} {y}");
        // A line through the centre climbing at the skew comes out level.
        let (x1, y1) = m.transform_xy(300.0 + 100.0 * skew.cos(), 400.0 + 100.0 * skew.sin());
        assert!((y1 - 400.0).abs() < 1e-3 && (x1 - 400.0).abs() < 1e-3, "{x1} {y1}");
    }
}

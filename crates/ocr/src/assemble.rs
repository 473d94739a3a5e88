//! A page's blocks in the input image's coordinates, from the lines read on the upright page.

use crate::gutter;
use crate::image::Grey;
use crate::page_text::{Block, Line, Rotation, Word};

/// The blocks of a page from its recognised lines (in the upright page's pixels) and their
/// reading order (line indexes per block), in input-image coordinates: the upright page was
/// the input turned clockwise by `rotation`, then scaled by `1 / scale_back`.
pub(crate) fn assemble(
    lines: &[gutter::RecLine],
    order: Vec<Vec<usize>>,
    rotation: Rotation,
    upright: &Grey,
    scale_back: [f32; 2],
) -> Vec<Block> {
    let [scale_back, scale_back_y] = scale_back;
    // Back to input coordinates.
    let (uw, uh) = (upright.width as f32, upright.height as f32);
    let to_input = |p: [f32; 2]| -> [f32; 2] {
        let q = unrotate(p, rotation, uw, uh);
        [q[0] * scale_back, q[1] * scale_back_y]
    };
    let quad_of = |c: [[f32; 2]; 4]| -> [[f32; 2]; 4] { c.map(to_input) };
    let bbox_of = |q: &[[f32; 2]; 4]| -> [f32; 4] {
        let mut e = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for p in q {
            e[0] = e[0].min(p[0]);
            e[1] = e[1].min(p[1]);
            e[2] = e[2].max(p[0]);
            e[3] = e[3].max(p[1]);
        }
        e
    };
    let mut blocks = Vec::new();
    for ids in order {
        let mut out_lines = Vec::new();
        for id in ids {
            let (rect, words_u, conf) = &lines[id];
            let words: Vec<Word> = words_u
                .iter()
                .map(|(text, c, r, alternatives)| {
                    let quad = quad_of(r.corners());
                    Word {
                        text: text.clone(),
                        confidence: *c,
                        bbox: bbox_of(&quad),
                        quad,
                        alternatives: alternatives.clone(),
                    }
                })
                .collect();
            let quad = quad_of(rect.corners());
            let text = words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" ");
            out_lines.push(Line { text, confidence: *conf, bbox: bbox_of(&quad), quad, words });
        }
        if out_lines.is_empty() {
            continue;
        }
        let mut e = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for l in &out_lines {
            e[0] = e[0].min(l.bbox[0]);
            e[1] = e[1].min(l.bbox[1]);
            e[2] = e[2].max(l.bbox[2]);
            e[3] = e[3].max(l.bbox[3]);
        }
        blocks.push(Block { bbox: e, lines: out_lines });
    }
    blocks
}

/// Maps a point of the upright image (size `uw` x `uh`) back to the input image.
fn unrotate(p: [f32; 2], rotation: u32, uw: f32, uh: f32) -> [f32; 2] {
    match rotation {
        // upright = input turned cw 90: input (x, y) -> (H - y, x), H = uw.
        90 => [p[1], uw - p[0]],
        180 => [uw - p[0], uh - p[1]],
        // upright = input turned cw 270: input (x, y) -> (y, W - x), W = uh.
        270 => [uh - p[1], p[0]],
        _ => p,
    }
}

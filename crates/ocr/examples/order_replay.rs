//! Re-orders recognised lines with the current `gutter::arrange` (gutter cuts, deskew, XY-cut)
//! without OCR: reads `PageText` JSON lines (`OCR_JSON=1 ocr_image ...`) on stdin and prints one
//! JSON array of page texts (lines by `\n`, blocks by `\n\n`). Pages read turned keep their text.
use std::io::Read;

use ocr::RotRect;
use serde_json::Value;

/// The rectangle of a quad (top-left, top-right, bottom-right, bottom-left).
fn rect(q: &Value) -> RotRect {
    let p: Vec<[f32; 2]> =
        (0..4).map(|i| [q[i][0].as_f64().unwrap() as f32, q[i][1].as_f64().unwrap() as f32]).collect();
    let (dx, dy) = (p[1][0] - p[0][0], p[1][1] - p[0][1]);
    let (ux, uy) = (p[0][0] - p[3][0], p[0][1] - p[3][1]);
    RotRect {
        cx: p.iter().map(|v| v[0]).sum::<f32>() / 4.0,
        cy: p.iter().map(|v| v[1]).sum::<f32>() / 4.0,
        w: (dx * dx + dy * dy).sqrt(),
        h: (ux * ux + uy * uy).sqrt(),
        angle: dy.atan2(dx),
    }
}

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let texts: Vec<String> = input
        .lines()
        .map(|l| {
            let page: Value = serde_json::from_str(l).expect("PageText JSON");
            let blocks = page["blocks"].as_array().unwrap();
            let lines: Vec<ocr::gutter::RecLine> = blocks
                .iter()
                .flat_map(|b| b["lines"].as_array().unwrap().iter())
                .map(|l| {
                    let words = l["words"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|w| {
                            (
                                w["text"].as_str().unwrap().to_string(),
                                w["confidence"].as_f64().unwrap() as f32,
                                rect(&w["quad"]),
                                Vec::new(),
                            )
                        })
                        .collect();
                    (rect(&l["quad"]), words, l["confidence"].as_f64().unwrap() as f32)
                })
                .collect();
            if page["rotation"].as_u64() != Some(0) {
                return blocks
                    .iter()
                    .map(|b| {
                        b["lines"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|l| l["text"].as_str().unwrap())
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .collect::<Vec<_>>()
                    .join("\n\n");
            }
            let (lines, order) = ocr::gutter::arrange(lines);
            if std::env::var_os("ORDER_BOXES").is_some() {
                for b in &order {
                    eprintln!("BLOCK");
                    for &i in b {
                        let e = lines[i].0.envelope().map(|v| v as i32);
                        eprintln!("  {e:?} {}", lines[i].1.iter().map(|w| w.0.as_str()).collect::<Vec<_>>().join(" "));
                    }
                }
            }
            order
                .iter()
                .map(|b| {
                    b.iter()
                        .map(|&i| lines[i].1.iter().map(|w| w.0.as_str()).collect::<Vec<_>>().join(" "))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .collect::<Vec<_>>()
                .join("\n\n")
        })
        .collect();
    println!("{}", serde_json::to_string(&texts).unwrap());
}

//! Re-orders recognised lines with the current `layout::reading_order`, without OCR: reads
//! `[[ [x0, y0, x1, y1, text], ... ], ...]` (one array of lines per page) on stdin and prints one
//! JSON array of page texts (lines by `\n`, blocks by `\n\n`). Used by scripts/bench/ocr-eval-replay.ts.
use std::io::Read;

/// A recognised line: its box (x0, y0, x1, y1) and its text.
type BoxedLine = (f32, f32, f32, f32, String);

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).expect("stdin");
    let pages: Vec<Vec<BoxedLine>> = serde_json::from_str(&input).expect("JSON pages of lines");
    let texts: Vec<String> = pages
        .iter()
        .map(|lines| {
            let boxes: Vec<[f32; 4]> = lines.iter().map(|l| [l.0, l.1, l.2, l.3]).collect();
            ocr::layout::reading_order(&boxes)
                .iter()
                .map(|block| block.iter().map(|&i| lines[i].4.as_str()).collect::<Vec<_>>().join("\n"))
                .collect::<Vec<_>>()
                .join("\n\n")
        })
        .collect();
    println!("{}", serde_json::to_string(&texts).unwrap());
}

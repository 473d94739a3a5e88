//! The text a page reads as: words, lines and blocks with their boxes in the input's pixels.

use serde::{Deserialize, Serialize};

/// Page orientation found, as the clockwise rotation that makes the text upright.
pub type Rotation = u32;

/// A recognised word. Coordinates are input-image pixels (origin top-left).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Word {
    /// Text.
    pub text: String,
    /// Mean character confidence, 0-1.
    pub confidence: f32,
    /// Axis-aligned box `[x0, y0, x1, y1]`.
    pub bbox: [f32; 4],
    /// Corners in reading direction: top-left, top-right, bottom-right, bottom-left of
    /// the upright word (for placing rotated text).
    pub quad: [[f32; 2]; 4],
    /// Characters the recogniser nearly read instead of some of the word's (for the
    /// dictionary corrections of [`lexicon`](crate::lexicon); not part of the result).
    #[serde(skip)]
    pub alternatives: Vec<Alternative>,
}

/// A character the recogniser nearly read in place of one of a word's: its runner-up at
/// the character's peak ([`rec::Glyph::runner_up`](crate::rec::Glyph::runner_up)).
#[derive(Clone, Debug, PartialEq)]
pub struct Alternative {
    /// Index (in characters) of the character in the word's text.
    pub at: usize,
    /// The character read there.
    pub read: char,
    /// The runner-up.
    pub instead: char,
    /// The runner-up's probability.
    pub prob: f32,
}

/// A recognised line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Line {
    /// Text (words joined by single spaces).
    pub text: String,
    /// Mean character confidence.
    pub confidence: f32,
    /// Axis-aligned box.
    pub bbox: [f32; 4],
    /// Corners in reading direction (see [`Word::quad`]).
    pub quad: [[f32; 2]; 4],
    /// Words in reading order.
    pub words: Vec<Word>,
}

/// A block of lines (a column part or paragraph found by the layout analysis).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Block {
    /// Axis-aligned box.
    pub bbox: [f32; 4],
    /// Lines in reading order.
    pub lines: Vec<Line>,
}

/// The text of one image.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PageText {
    /// Input width in pixels.
    pub width: usize,
    /// Input height in pixels.
    pub height: usize,
    /// Clockwise rotation (0, 90, 180, 270) that makes the text upright.
    pub rotation: Rotation,
    /// Blocks in reading order.
    pub blocks: Vec<Block>,
}

impl PageText {
    /// Mean confidence of the page's characters (each line's confidence weighted by its
    /// length); 0 for a page without text.
    pub fn mean_confidence(&self) -> f32 {
        let (mut sum, mut n) = (0f32, 0usize);
        for l in self.blocks.iter().flat_map(|b| &b.lines) {
            let c = l.text.chars().filter(|c| !c.is_whitespace()).count();
            sum += l.confidence * c as f32;
            n += c;
        }
        if n == 0 {
            0.0
        } else {
            sum / n as f32
        }
    }

    /// Plain text: lines joined by newlines, blocks by blank lines.
    pub fn text(&self) -> String {
        self.blocks
            .iter()
            .map(|b| b.lines.iter().map(|l| l.text.as_str()).collect::<Vec<_>>().join("\n"))
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

//! CTC decoding with per-character frame positions, space recovery and word spans.

/// One decoded character with its frame span in the recognition input.
#[derive(Clone, Debug)]
pub struct Glyph {
    /// The character (a space for word breaks, whether emitted or recovered).
    pub ch: String,
    /// First frame of the character's run.
    pub start: usize,
    /// Last frame of the run (inclusive).
    pub end: usize,
    /// Peak probability.
    pub prob: f32,
    /// Highest probability of the space class over the frames between the previous
    /// character and this one.
    pub space_before: f32,
    /// A space [`recover_spaces`] inserted (the model did not write it).
    pub recovered: bool,
    /// Probability of the same letter in the other case at the frame of [`Glyph::prob`]
    /// (0 for characters without case).
    pub other_case: f32,
    /// The likeliest other character at the frame of [`Glyph::prob`] and its probability
    /// (not the blank, the space or the character itself), when it reaches
    /// [`RUNNER_UP_MIN`]: what a dictionary may take instead of a word it does not know.
    pub runner_up: Option<(String, f32)>,
}

/// Probability from which a glyph's runner-up is kept.
pub const RUNNER_UP_MIN: f32 = 0.01;

/// Greedy CTC decode of one `t` x `c` probability matrix over the first `valid` frames.
/// Class 0 is the blank; class `i` is `dict[i - 1]`; the class after the dictionary is the
/// space (PaddleOCR `use_space_char`). `other_case` maps a class to the class of the same
/// letter in the other case (0: none; [`other_case_classes`]), empty to skip.
pub fn ctc_decode(
    probs: &[f32],
    t: usize,
    c: usize,
    valid: usize,
    dict: &[String],
    other_case: &[usize],
) -> Vec<Glyph> {
    let other = |row: &[f32], class: usize| other_case.get(class).filter(|&&o| o != 0).map_or(0.0, |&o| row[o]);
    let mut out: Vec<Glyph> = Vec::new();
    // Frame and class of each glyph's peak, for its runner-up once the peaks are known.
    let mut peaks: Vec<(usize, usize)> = Vec::new();
    let mut prev = 0usize;
    let space = dict.len() + 1;
    let mut gap_space = 0f32;
    for f in 0..valid.min(t) {
        let row = &probs[f * c..(f + 1) * c];
        if space < c {
            gap_space = gap_space.max(row[space]);
        }
        let (best, bp) = argmax_softmax(row);
        if best != 0 && best == prev {
            if let Some(g) = out.last_mut() {
                g.end = f;
                if bp > g.prob {
                    g.prob = bp;
                    g.other_case = other(row, best);
                    if let Some(p) = peaks.last_mut() {
                        p.0 = f;
                    }
                }
            }
        } else if best != 0 {
            let ch = if best <= dict.len() { dict[best - 1].clone() } else { " ".to_string() };
            let other_case = other(row, best);
            out.push(Glyph {
                ch,
                start: f,
                end: f,
                prob: bp,
                space_before: gap_space,
                recovered: false,
                other_case,
                runner_up: None,
            });
            peaks.push((f, best));
            gap_space = 0.0;
        }
        prev = best;
    }
    // One full scan of the classes per character (not per frame: see argmax_softmax).
    for (g, &(f, class)) in out.iter_mut().zip(&peaks) {
        if class > dict.len() || g.prob > 1.0 - RUNNER_UP_MIN {
            continue;
        }
        let row = &probs[f * c..(f + 1) * c];
        let (mut second, mut sp) = (0usize, RUNNER_UP_MIN);
        for (i, &p) in row.iter().enumerate().take(dict.len() + 1).skip(1) {
            if p >= sp && i != class {
                sp = p;
                second = i;
            }
        }
        if second != 0 {
            g.runner_up = Some((dict[second - 1].clone(), sp));
        }
    }
    out
}

/// For each class (`i` is `dict[i - 1]`, 0 the blank), the class of the same letter in the
/// other case, 0 when the dictionary has none (or the entry is not one cased letter).
pub fn other_case_classes(dict: &[String]) -> Vec<usize> {
    // The first class of each entry: full-width forms folded to ASCII ([`crate::sessions`])
    // repeat letters later in the dictionary, classes the model hardly uses.
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, d) in dict.iter().enumerate() {
        index.entry(d.as_str()).or_insert(i + 1);
    }
    let mut out = vec![0usize; dict.len() + 1];
    for (i, d) in dict.iter().enumerate() {
        let mut cs = d.chars();
        let (Some(c), None) = (cs.next(), cs.next()) else { continue };
        let swapped: String = if c.is_uppercase() { c.to_lowercase().collect() } else { c.to_uppercase().collect() };
        if swapped != *d {
            out[i + 1] = index.get(swapped.as_str()).copied().unwrap_or(0);
        }
    }
    out
}

/// Index and value of the largest probability of a softmax row. A probability above 0.5
/// is the largest (the row sums to 1), so the scan stops there: most CTC frames are blank
/// with a probability near 1, and a full scan of the 6,907 classes of every frame was a
/// tenth of the recognition time.
#[inline]
fn argmax_softmax(row: &[f32]) -> (usize, f32) {
    if row.first().is_some_and(|&p| p > 0.5) {
        return (0, row[0]);
    }
    let (mut best, mut bp) = (0usize, f32::MIN);
    for (i, &p) in row.iter().enumerate() {
        if p > bp {
            bp = p;
            best = i;
            if p > 0.5 {
                break;
            }
        }
    }
    (best, bp)
}

/// Inserts spaces the model did not emit: where the space class reaches [`SPACE_PROB`]
/// in a blank frame between two characters (the model "saw" a space but blank won the
/// argmax), or where the distance between two consecutive character peaks is more than
/// [`GAP_FACTOR`] times the line's median character pitch (and at least
/// [`GAP_MIN_FRAMES`] frames), a word break is assumed. This recovers the
/// spaces the Chinese PP-OCRv4 recogniser drops in tight text ("SOONHUATMACHINERY").
/// No space is inserted between two CJK characters ([`crate::languages::is_cjk`]).
pub fn recover_spaces(glyphs: Vec<Glyph>) -> Vec<Glyph> {
    let centre = |g: &Glyph| (g.start + g.end) as f32 / 2.0;
    let mut pitches: Vec<f32> =
        glyphs.windows(2).filter(|w| w[0].ch != " " && w[1].ch != " ").map(|w| centre(&w[1]) - centre(&w[0])).collect();
    if pitches.len() < 3 {
        return glyphs;
    }
    pitches.sort_by(f32::total_cmp);
    let median = pitches[pitches.len() / 2];
    let threshold = (median * GAP_FACTOR).max(GAP_MIN_FRAMES);
    let mut out = Vec::with_capacity(glyphs.len() + 4);
    for (i, g) in glyphs.iter().enumerate() {
        if i > 0 {
            let p = &glyphs[i - 1];
            // Never between two CJK characters: those lines have no spaces, and a wide gap
            // there is layout (justification, ruby), not a word break.
            let cjk_pair = p.ch.chars().last().is_some_and(crate::languages::is_cjk)
                && g.ch.chars().next().is_some_and(crate::languages::is_cjk);
            if p.ch != " "
                && g.ch != " "
                && !cjk_pair
                && (g.space_before > SPACE_PROB || centre(g) - centre(p) > threshold)
            {
                out.push(Glyph {
                    ch: " ".into(),
                    start: p.end + 1,
                    end: g.start.saturating_sub(1).max(p.end + 1),
                    prob: 0.5,
                    space_before: 0.0,
                    recovered: true,
                    other_case: 0.0,
                    runner_up: None,
                });
            }
        }
        out.push(g.clone());
    }
    out
}

/// Takes back the spaces [`recover_spaces`] inserted in a page's lines where the page itself
/// says the two halves are one word: the joined word is read elsewhere on the page as one word
/// between spaces the model wrote (or line ends), and the two halves are not both read so.
/// Why: inside a word, the blank columns of a wide or open letter (the sides of a W or an A)
/// raise the space class to 0.05-0.2 with no word break there ("FOR WARD" on every scan of the
/// LinnSequencer page, "A bbildung", "id x" on geotopo pages), while a real dropped space
/// shows no more; the page's own words tell the cases apart without a dictionary. Words are
/// compared with their leading and trailing punctuation stripped ("FORWARD," is "FORWARD"),
/// and only halves of letters are joined.
pub fn rejoin_split_words(lines: &mut [Vec<Glyph>]) {
    rejoin_split_words_seen(lines, &[]);
}

/// [`rejoin_split_words`] where the words of `other_reads` (the page's lines read again and
/// not kept) count as read too: a squeezed crop split `FORWARD,` on every line of the
/// LinnSequencer page, and its unsqueezed re-read of one line read it whole.
pub fn rejoin_split_words_seen(lines: &mut [Vec<Glyph>], other_reads: &[Vec<Glyph>]) {
    let words: Vec<Vec<Span>> = lines.iter().map(|l| word_spans(l)).collect();
    let text = |line: &[Glyph], w: &Span| -> String { line[w.start..w.end].iter().map(|g| g.ch.as_str()).collect() };
    let core = |w: &str| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string();
    // Words read between spaces the model wrote (or line ends).
    let mut solid: std::collections::HashSet<String> = std::collections::HashSet::new();
    let other_words: Vec<Vec<Span>> = other_reads.iter().map(|l| word_spans(l)).collect();
    for (line, ws) in lines.iter().zip(&words).chain(other_reads.iter().zip(&other_words)) {
        for (k, w) in ws.iter().enumerate() {
            if !w.recovered_before && !ws.get(k + 1).is_some_and(|n| n.recovered_before) {
                solid.insert(core(&text(line, w)));
            }
        }
    }
    for (line, ws) in lines.iter_mut().zip(&words) {
        let mut drop = vec![false; line.len()];
        for pair in ws.windows(2) {
            let (left, right) = (&pair[0], &pair[1]);
            if !right.recovered_before {
                continue;
            }
            let (a, b) = (text(line, left), text(line, right));
            let joined = core(&format!("{a}{b}"));
            let (a, b) = (core(&a), core(&b));
            let halves_are_words = solid.contains(&a) && solid.contains(&b);
            // Letters only: formulas' and codes' spacing is no word spacing ("Cn−1 (K)").
            let letters = |w: &str| !w.is_empty() && w.chars().all(char::is_alphabetic);
            if letters(&a) && letters(&b) && solid.contains(&joined) && !halves_are_words {
                drop[left.end..right.start].iter_mut().for_each(|d| *d = true);
            }
        }
        if drop.contains(&true) {
            let mut keep = drop.iter().map(|d| !d);
            line.retain(|_| keep.next().unwrap_or(true));
        }
    }
}

/// A word of a line: glyph index range and whether the spaces before it are all recovered.
struct Span {
    start: usize,
    end: usize,
    recovered_before: bool,
}

/// The words of a line (runs of non-space glyphs); a word's break is recovered when every
/// glyph between it and the previous word is a recovered space.
fn word_spans(line: &[Glyph]) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    let mut start: Option<usize> = None;
    for (i, g) in line.iter().enumerate() {
        if g.ch == " " {
            if let Some(s) = start.take() {
                out.push(Span { start: s, end: i, recovered_before: false });
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(Span { start: s, end: line.len(), recovered_before: false });
    }
    for k in 1..out.len() {
        let gap = &line[out[k - 1].end..out[k].start];
        out[k].recovered_before = !gap.is_empty() && gap.iter().all(|g| g.recovered);
    }
    out
}

/// Pitch multiple above which a gap between two characters is a word break.
pub const GAP_FACTOR: f32 = 2.6;
/// Space-class probability in a gap frame above which a space is recovered.
pub const SPACE_PROB: f32 = 0.05;
/// Minimum gap (frames of 8 input pixels, i.e. 1/6 of the line height) for a recovered space.
pub const GAP_MIN_FRAMES: f32 = 3.0;

/// A word: text, confidence and its span in frames (continuous, start inclusive, end exclusive).
#[derive(Clone, Debug)]
pub struct WordSpan {
    /// Text.
    pub text: String,
    /// Mean peak probability of its characters.
    pub confidence: f32,
    /// Left edge in frames.
    pub x0: f32,
    /// Right edge in frames.
    pub x1: f32,
    /// Runner-ups of its one-character glyphs with at least [`ALTERNATIVE_MIN`].
    pub alternatives: Vec<crate::Alternative>,
}

/// Runner-up probability from which a word carries it as an [`crate::Alternative`].
pub const ALTERNATIVE_MIN: f32 = 0.05;

/// Splits glyphs into words at spaces. A word spans from half a median pitch before its
/// first character peak to half a pitch after its last, but never more than 40% of the
/// way to the neighbouring word's nearest peak, so that neighbouring word boxes never
/// touch (text layers and selection need the gap).
pub fn words(glyphs: &[Glyph]) -> Vec<WordSpan> {
    let centre = |g: &Glyph| (g.start + g.end) as f32 / 2.0 + 0.5;
    let mut pitches: Vec<f32> =
        glyphs.windows(2).filter(|w| w[0].ch != " " && w[1].ch != " ").map(|w| centre(&w[1]) - centre(&w[0])).collect();
    pitches.sort_by(f32::total_cmp);
    let half = pitches.get(pitches.len() / 2).copied().unwrap_or(3.0) / 2.0;
    // Groups of non-space glyphs.
    let groups: Vec<&[Glyph]> = word_spans(glyphs).iter().map(|w| &glyphs[w.start..w.end]).collect();
    let mut out = Vec::with_capacity(groups.len());
    for (i, cur) in groups.iter().enumerate() {
        let text: String = cur.iter().map(|g| g.ch.as_str()).collect();
        let mut alternatives = Vec::new();
        let mut at = 0;
        for g in cur.iter() {
            let mut read = g.ch.chars();
            if let (Some(read), None, Some((instead, prob))) = (read.next(), read.next(), &g.runner_up) {
                let mut instead_chars = instead.chars();
                if let (Some(instead), None) = (instead_chars.next(), instead_chars.next()) {
                    if *prob >= ALTERNATIVE_MIN {
                        alternatives.push(crate::Alternative { at, read, instead, prob: *prob });
                    }
                }
            }
            at += g.ch.chars().count();
        }
        let confidence = cur.iter().map(|g| g.prob).sum::<f32>() / cur.len() as f32;
        let first = centre(&cur[0]);
        let last = centre(&cur[cur.len() - 1]);
        let mut x0 = (first - half).max(0.0);
        let mut x1 = last + half;
        if i > 0 {
            let prev = centre(&groups[i - 1][groups[i - 1].len() - 1]);
            x0 = x0.max(first - 0.4 * (first - prev));
        }
        if i + 1 < groups.len() {
            let next = centre(&groups[i + 1][0]);
            x1 = x1.min(last + 0.4 * (next - last));
        }
        out.push(WordSpan { text, confidence, x0, x1: x1.max(x0 + 0.5), alternatives });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(ch: &str, f: usize) -> Glyph {
        Glyph {
            ch: ch.into(),
            start: f,
            end: f,
            prob: 0.9,
            space_before: 0.0,
            recovered: false,
            other_case: 0.0,
            runner_up: None,
        }
    }

    #[test]
    fn other_case_classes_pair_letters_with_their_first_other_case_class() {
        let dict: Vec<String> = ["O", "a", "o", "1", "A", "o"].iter().map(|s| s.to_string()).collect();
        // Classes: 1 O, 2 a, 3 o, 4 1, 5 A, 6 o (a folded full-width twin).
        assert_eq!(other_case_classes(&dict), vec![0, 3, 5, 1, 0, 2, 1]);
    }

    #[test]
    fn ctc_collapses_repeats_and_drops_blanks() {
        let dict: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        // classes: 0 blank, 1 a, 2 b, 3 space
        let frames = [1, 1, 0, 1, 2, 3, 2];
        let c = 4;
        let mut probs = vec![0f32; frames.len() * c];
        for (f, &k) in frames.iter().enumerate() {
            probs[f * c + k] = 1.0;
        }
        let out = ctc_decode(&probs, frames.len(), c, frames.len(), &dict, &[]);
        let text: String = out.iter().map(|g| g.ch.as_str()).collect();
        assert_eq!(text, "aab b");
        assert_eq!((out[0].start, out[0].end), (0, 1));
    }

    #[test]
    fn each_character_keeps_its_runner_up_at_its_peak_frame_and_words_carry_them() {
        let dict: Vec<String> = ["h", "l", "i"].iter().map(|s| s.to_string()).collect();
        // classes: 0 blank, 1 h, 2 l, 3 i, 4 space. Frames: h (l runner-up 0.1), h at its peak
        // (l 0.3), blank, i read surely.
        let rows: [[f32; 5]; 4] = [
            [0.2, 0.6, 0.1, 0.1, 0.0],
            [0.0, 0.65, 0.3, 0.05, 0.0],
            [1.0, 0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 1.0, 0.0],
        ];
        let probs: Vec<f32> = rows.iter().flatten().copied().collect();
        let out = ctc_decode(&probs, 4, 5, 4, &dict, &[]);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].runner_up, Some(("l".to_string(), 0.3)), "the runner-up at the peak (frame 0's was 0.1)");
        assert_eq!(out[1].runner_up, None, "a sure character has none");
        let w = words(&out);
        assert_eq!(w[0].alternatives, [crate::Alternative { at: 0, read: 'h', instead: 'l', prob: 0.3 }]);
    }

    #[test]
    fn a_wide_gap_between_peaks_becomes_a_space() {
        let glyphs = vec![g("S", 0), g("O", 3), g("O", 6), g("N", 9), g("H", 22), g("U", 21), g("A", 24)];
        let out = recover_spaces(glyphs);
        let text: String = out.iter().map(|g| g.ch.as_str()).collect();
        assert_eq!(text, "SOON HUA");
        let w = words(&out);
        assert_eq!(w.len(), 2);
        assert!(w[0].x1 <= w[1].x0);
    }

    /// Glyphs of `text`, one frame apart; `|` is a recovered space, ` ` one the model wrote.
    fn line(text: &str) -> Vec<Glyph> {
        text.chars()
            .enumerate()
            .map(|(i, c)| match c {
                '|' => Glyph { recovered: true, ..g(" ", i) },
                c => g(&c.to_string(), i),
            })
            .collect()
    }

    fn texts(lines: &[Vec<Glyph>]) -> Vec<String> {
        lines.iter().map(|l| l.iter().map(|g| g.ch.as_str()).collect()).collect()
    }

    #[test]
    fn a_recovered_space_inside_a_word_the_page_reads_whole_elsewhere_is_taken_back() {
        let mut lines = vec![line("FAST FOR|WARD, REWIND"), line("FORWARD, REWIND, and LOCATE")];
        rejoin_split_words(&mut lines);
        assert_eq!(texts(&lines), ["FAST FORWARD, REWIND", "FORWARD, REWIND, and LOCATE"]);
    }

    #[test]
    fn a_word_read_whole_only_by_a_read_not_kept_still_takes_back_the_split() {
        // Every kept read splits the word; a re-read of one line that was not kept (less
        // sure) read it whole.
        let mut lines = vec![line("FAST FOR|WARD, REWIND"), line("FOR|WARD, REWIND, and")];
        rejoin_split_words_seen(&mut lines, &[line("FORWARD, REWIND, and")]);
        assert_eq!(texts(&lines), ["FAST FORWARD, REWIND", "FORWARD, REWIND, and"]);
        let mut lines = vec![line("FAST FOR|WARD, REWIND")];
        rejoin_split_words_seen(&mut lines, &[]);
        assert_eq!(texts(&lines), ["FAST FOR WARD, REWIND"]);
    }

    #[test]
    fn a_recovered_space_stays_when_the_page_reads_both_halves_as_words() {
        // "into" elsewhere, but "in" and "to" too: the split may be right.
        let mut lines = vec![line("went in|to the"), line("into it"), line("to go in")];
        rejoin_split_words(&mut lines);
        assert_eq!(texts(&lines)[0], "went in to the");
        // Halves with digits or symbols (a formula) are not joined.
        let mut lines = vec![line("Cn−1|(K) die"), line("Cn−1(K) und")];
        rejoin_split_words(&mut lines);
        assert_eq!(texts(&lines)[0], "Cn−1 (K) die");
        // Nor is a space the model wrote ever taken back, nor one whose joined word is read
        // only beside another recovered space.
        let mut lines = vec![line("FOR WARD"), line("FOR|WARD"), line("a FORWARD|b")];
        rejoin_split_words(&mut lines);
        assert_eq!(texts(&lines), ["FOR WARD", "FOR WARD", "a FORWARD b"]);
    }

    #[test]
    fn no_space_is_recovered_between_cjk_characters() {
        // The same gaps as above: between kana and kanji they stay closed, and a Latin word
        // after them still gets its space.
        let glyphs = vec![g("日", 0), g("本", 3), g("語", 6), g("の", 9), g("文", 22), g("A", 35), g("B", 38)];
        let text: String = recover_spaces(glyphs).iter().map(|g| g.ch.as_str()).collect();
        assert_eq!(text, "日本語の文 AB");
    }
}

//! Line crops and the models that read them: the 0/180 direction vote over the widest
//! lines, and recognition in batches of similar widths, CTC decoding to words with boxes.

use ort::value::Tensor;

use std::sync::Mutex;

use crate::batches::batch_by_width;
use crate::recogniser::Recogniser;
use crate::{inference, rec, Grey, Ocr, OcrError, Result, RotRect, StageTimer, DROP_SCORE, REC_HEIGHT, REC_MAX_WIDTH};

impl Ocr {
    /// Crops a rotated rectangle to `REC_HEIGHT` rows, `width` columns, as normalised floats.
    fn crop(grey: &Grey, r: &RotRect, height: usize, width: usize) -> Vec<f32> {
        let mut out = vec![0f32; height * width];
        Self::crop_into(grey, r, height, width, &mut out, width);
        out
    }

    /// [`crop`](Self::crop) written straight into a zeroed batch plane whose rows are
    /// `stride` floats apart (no intermediate buffer and copy per line).
    fn crop_into(grey: &Grey, r: &RotRect, height: usize, width: usize, out: &mut [f32], stride: usize) {
        let (u, v) = r.axes();
        let sx = r.w / width as f32;
        let sy = r.h / height as f32;
        // Supersample when shrinking a lot, to avoid aliasing.
        let ss = if sy > 2.0 { 2 } else { 1 };
        // Rectangles clear of the border (nearly all) take the sampler without edge checks.
        let e = r.envelope();
        let inside = e[0] >= 1.0 && e[1] >= 1.0 && e[2] <= grey.width as f32 - 2.0 && e[3] <= grey.height as f32 - 2.0;
        // (mean / 255 - 0.5) / 0.5, the recogniser's normalisation.
        let norm = 2.0 / (255.0 * (ss * ss) as f32);
        let (dx, dy) = (u[0] * sx, u[1] * sx);
        for (y, row) in out.chunks_mut(stride).take(height).map(|row| &mut row[..width]).enumerate() {
            for j in 0..ss {
                let b = (y as f32 + (j as f32 + 0.5) / ss as f32) * sy - r.h / 2.0;
                for i in 0..ss {
                    let a = (i as f32 + 0.5) / ss as f32 * sx - r.w / 2.0;
                    let (px, py) = (r.cx + u[0] * a + v[0] * b, r.cy + u[1] * a + v[1] * b);
                    if inside {
                        for (x, o) in row.iter_mut().enumerate() {
                            *o += grey.sample_inside(px + dx * x as f32, py + dy * x as f32);
                        }
                    } else {
                        for (x, o) in row.iter_mut().enumerate() {
                            *o += grey.sample(px + dx * x as f32, py + dy * x as f32);
                        }
                    }
                }
            }
            for o in row.iter_mut() {
                *o = *o * norm - 1.0;
            }
        }
    }

    /// Returns true when the page reads upside down (votes of the direction classifier over
    /// the [`widest_lines`]).
    pub(crate) fn vote_flip(&self, grey: &Grey, rects: &[RotRect]) -> Result<bool> {
        let cand: Vec<&RotRect> = widest_lines(rects).into_iter().map(|i| &rects[i]).collect();
        if cand.is_empty() {
            return Ok(false);
        }
        let (h, w) = (48usize, 192usize);
        let mut data = Vec::with_capacity(cand.len() * 3 * h * w);
        for r in &cand {
            // Keep the aspect ratio: crop width proportional, padded with 0.
            let cw = ((r.w / r.h * h as f32).round() as usize).clamp(8, w);
            let crop = Self::crop(grey, r, h, cw);
            let mut plane = vec![0f32; h * w];
            for y in 0..h {
                plane[y * w..y * w + cw].copy_from_slice(&crop[y * cw..(y + 1) * cw]);
            }
            for _ in 0..3 {
                data.extend_from_slice(&plane);
            }
        }
        let tensor = Tensor::from_array(([cand.len(), 3, h, w], data)).map_err(inference)?;
        let mut timer = StageTimer::new(self.tuning.timing);
        let vote = self.run_model(&self.cls, tensor, &mut timer, "cls.run", |outputs| {
            let (_, probs) = outputs[0].try_extract_tensor::<f32>().map_err(inference)?;
            Ok((0..cand.len()).map(|i| probs[i * 2 + 1] - probs[i * 2]).sum::<f32>())
        })?;
        Ok(vote > 0.0)
    }

    /// Reads one batch of lines (`batch`: indices into `rects`, cropped `widths[i]` wide) with
    /// session `session` of `rec`, under the machine-wide lock when `lock` (false: the caller
    /// holds it): for each line with characters, its glyphs, mean character confidence and
    /// page pixels per output frame.
    fn read_batch(
        &self,
        grey: &Grey,
        rects: &[RotRect],
        widths: &[usize],
        batch: &[usize],
        (rec, session, lock): (&Recogniser, usize, bool),
        timer: &mut StageTimer,
    ) -> Result<BatchReads> {
        let widest = batch.iter().map(|&i| widths[i]).max().unwrap_or(0);
        let bw = rec.policy.run_width(widest, self.tuning.rec_min_width);
        let n = batch.len();
        let plane = REC_HEIGHT * bw;
        let mut data = vec![0f32; n * 3 * plane];
        for (k, &i) in batch.iter().enumerate() {
            // The line into the first channel's plane, then that plane (padding included)
            // copied to the other two: the model sees the same grey in all three.
            let line = &mut data[k * 3 * plane..(k + 1) * 3 * plane];
            Self::crop_into(grey, &rects[i], REC_HEIGHT, widths[i], &mut line[..plane], bw);
            line.copy_within(..plane, plane);
            line.copy_within(..plane, 2 * plane);
        }
        let tensor = Tensor::from_array(([n, 3, REC_HEIGHT, bw], data)).map_err(inference)?;
        if self.tuning.timing {
            let useful: usize = batch.iter().map(|&i| widths[i]).sum();
            timer.mark(&format!("rec.crop n={n} w={bw} cols {useful}/{}", n * bw));
        }
        let out = self.run_session(&rec.sessions[session], tensor, timer, "rec.run", lock, |outputs| {
            let (shape, probs) = outputs[0].try_extract_tensor::<f32>().map_err(inference)?;
            let (t, c) = (shape[1] as usize, shape[2] as usize);
            let frame_px = bw as f32 / t as f32;
            let mut out = Vec::with_capacity(n);
            for (k, &i) in batch.iter().enumerate() {
                let valid = ((widths[i] as f32 / frame_px).ceil() as usize).min(t);
                let mut glyphs =
                    rec::ctc_decode(&probs[k * t * c..(k + 1) * t * c], t, c, valid, &rec.dict, &rec.other_case);
                crate::case::case_by_neighbours(&mut glyphs);
                let glyphs = rec::recover_spaces(glyphs);
                let chars: Vec<&rec::Glyph> = glyphs.iter().filter(|g| g.ch != " ").collect();
                if chars.is_empty() {
                    continue;
                }
                let confidence = chars.iter().map(|g| g.prob).sum::<f32>() / chars.len() as f32;
                let chars = chars.len();
                // Frame units -> crop pixels -> page pixels along the line axis.
                let px_per_frame = frame_px * rects[i].w / widths[i] as f32;
                out.push((i, LineRead { glyphs, confidence, chars, px_per_frame }));
            }
            Ok(out)
        })?;
        timer.mark("rec.decode");
        Ok(out)
    }

    /// Reads `batches` ([`read_batch`](Self::read_batch)), their reads in batch order. With
    /// several sessions ([`crate::OcrTuning::rec_parallel`]), one thread per session takes
    /// the next batch not yet taken (widest first, so the threads finish together), under one
    /// hold of the machine-wide lock: a run of 2 single-threaded sessions side by side does
    /// the work of one 2-thread run without its hand-overs between the threads of every
    /// layer. The batches and each batch's reads are the same either way.
    fn read_batches(
        &self,
        grey: &Grey,
        rects: &[RotRect],
        widths: &[usize],
        batches: &[Vec<usize>],
        rec: &Recogniser,
        timer: &mut StageTimer,
    ) -> Result<Vec<BatchReads>> {
        let workers = rec.sessions.len().min(batches.len());
        if workers <= 1 {
            return batches.iter().map(|b| self.read_batch(grey, rects, widths, b, (rec, 0, true), timer)).collect();
        }
        let _run = self.machine_run()?;
        let next = std::sync::atomic::AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<BatchReads>>>> = batches.iter().map(|_| Mutex::new(None)).collect();
        let timing = self.tuning.timing;
        let work = |session: usize| {
            let mut timer = StageTimer::new(timing);
            loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(batch) = batches.get(k) else { break };
                let read = self.read_batch(grey, rects, widths, batch, (rec, session, false), &mut timer);
                let failed = read.is_err();
                if let Ok(mut slot) = slots[k].lock() {
                    *slot = Some(read);
                }
                if failed {
                    // The others stop at their next batch.
                    next.store(batches.len(), std::sync::atomic::Ordering::Relaxed);
                }
            }
        };
        std::thread::scope(|scope| {
            for session in 1..workers {
                let work = &work;
                scope.spawn(move || work(session));
            }
            work(0);
        });
        timer.mark("rec.batches");
        let mut out = Vec::with_capacity(batches.len());
        for slot in slots {
            match slot.into_inner().map_err(|_| OcrError::Inference("poisoned".into()))? {
                Some(read) => out.push(read?),
                None => return Err(OcrError::Inference("a recognition batch was not read".into())),
            }
        }
        Ok(out)
    }

    /// Recognises every rectangle ([`recognise_lines`](Self::recognise_lines) without a probe).
    pub(crate) fn read_all(&self, grey: &Grey, rects: &[RotRect], rec: &Recogniser) -> Result<Vec<Line>> {
        match self.recognise_lines(grey, rects, rec, None)? {
            Read::Done(lines) => Ok(lines),
            Read::Doubtful(_) => Err(OcrError::Inference("a read without a probe stopped early".into())),
        }
    }

    /// Recognises each rectangle: [`Read::Done`] with (line rect, words (text, conf, rect),
    /// line conf) for the lines kept, in the input order. With a `probe` (line indices and a
    /// confidence), those lines are read first, and when their mean character confidence is
    /// under it the rest is not read ([`Read::Doubtful`] with that confidence): an upside-down
    /// page is found after its widest lines instead of after all of them.
    pub(crate) fn recognise_lines(
        &self,
        grey: &Grey,
        rects: &[RotRect],
        rec: &Recogniser,
        probe: Option<(&[usize], f32)>,
    ) -> Result<Read> {
        let line_rects = rects;
        let (mut conf_sum, mut conf_chars) = (0f32, 0usize);
        // What each line is read from: its box carried past its right end.
        let crops: Vec<RotRect> = rects.iter().map(|r| r.extended_right(LINE_END_MARGIN * r.h)).collect();
        let rects = &crops[..];
        let width_at = |r: &RotRect, squeeze: f32| {
            ((r.w / r.h.max(1.0) * REC_HEIGHT as f32 * squeeze).round() as usize).clamp(16, REC_MAX_WIDTH)
        };
        let mut widths: Vec<usize> = rects.iter().map(|r| width_at(r, self.tuning.rec_squeeze)).collect();
        let rec_min = self.tuning.rec_min_width;
        let policy = rec.policy;
        let batches_of = |mut idx: Vec<usize>, widths: &[usize]| -> Vec<Vec<usize>> {
            idx.sort_by_key(|&i| widths[i]);
            let sorted: Vec<usize> = idx.iter().map(|&i| policy.run_width(widths[i], rec_min)).collect();
            batch_by_width(&sorted, policy.max_lines).into_iter().map(|(a, b)| idx[a..b].to_vec()).collect()
        };
        // Batches of similar widths, widest first: the probe's lines (the widest crops) are in
        // the first batches, which are the batches a read without a probe makes too (the model is
        // not blind to padding, so other batches would read some lines differently).
        let mut groups = batches_of((0..rects.len()).collect(), &widths);
        groups.reverse();
        // The probe is judged once the last batch holding one of its lines is read.
        let probe_batches = probe
            .map_or(0, |(ids, _)| groups.iter().rposition(|b| b.iter().any(|i| ids.contains(i))).map_or(0, |k| k + 1));
        let mut results: Vec<Option<Line>> = vec![None; rects.len()];
        let mut timer = StageTimer::new(self.tuning.timing);
        // Each line's surest read.
        let mut reads: Vec<Option<LineRead>> = vec![None; rects.len()];
        // The reads not kept (the less sure of two), whose words still count as the page's.
        let mut others: Vec<Vec<rec::Glyph>> = Vec::new();
        let debug = self.tuning.debug;
        let keep_surer = |reads: &mut [Option<LineRead>],
                          others: &mut Vec<Vec<rec::Glyph>>,
                          i: usize,
                          read: LineRead,
                          pass: &str| {
            if debug {
                // Each character, with its runner-up in brackets where it has one.
                let text: String = read
                    .glyphs
                    .iter()
                    .map(|g| match &g.runner_up {
                        Some((r, p)) if *p >= rec::ALTERNATIVE_MIN => format!("{}[{r}{p:.2}]", g.ch),
                        _ => g.ch.clone(),
                    })
                    .collect();
                eprintln!("line {:?} conf {:.2} {pass} {text}", rects[i], read.confidence);
            }
            if reads[i].as_ref().is_none_or(|r| read.confidence > r.confidence) {
                if let Some(old) = reads[i].replace(read) {
                    others.push(old.glyphs);
                }
            } else {
                others.push(read.glyphs);
            }
        };
        // The probe's batches, then (unless the probe stops the read) the others.
        for (phase, range) in [(0, 0..probe_batches), (1, probe_batches..groups.len())] {
            if let Some((_, below)) = probe.filter(|_| phase == 1 && conf_chars > 0) {
                let confidence = conf_sum / conf_chars as f32;
                if confidence < below {
                    if self.tuning.timing {
                        eprintln!("probe confidence {confidence:.3} over {conf_chars} characters: doubtful");
                    }
                    return Ok(Read::Doubtful(confidence));
                }
            }
            for batch in self.read_batches(grey, rects, &widths, &groups[range], rec, &mut timer)? {
                for (i, read) in batch {
                    conf_sum += read.confidence * read.chars as f32;
                    conf_chars += read.chars;
                    keep_surer(&mut reads, &mut others, i, read, "read");
                }
            }
        }
        if self.tuning.rec_squeeze < 1.0 {
            // Lines read doubtfully from squeezed crops are read again unsqueezed, and the
            // surer read kept: squeezing costs little accuracy overall, but some of it on
            // tight or small print, whose lines read less surely. So are lines with a space
            // the model did not write (`rec::recover_spaces`): squeezed, the open sides of a
            // W raised the space class in `FORWARD,` on every line of the LinnSequencer page;
            // the words of the read not kept still count as the page's (rejoin below).
            let again: Vec<usize> = (0..rects.len())
                .filter(|&i| {
                    reads[i]
                        .as_ref()
                        .is_some_and(|r| r.confidence < REREAD_BELOW || r.glyphs.iter().any(|g| g.recovered))
                })
                .collect();
            for &i in &again {
                widths[i] = width_at(&rects[i], 1.0);
            }
            for batch in self.read_batches(grey, rects, &widths, &batches_of(again, &widths), rec, &mut timer)? {
                for (i, read) in batch {
                    keep_surer(&mut reads, &mut others, i, read, "re-read");
                }
            }
        }
        // Lines kept, with their index.
        let mut kept: Vec<(usize, LineRead)> = reads
            .into_iter()
            .enumerate()
            .filter_map(|(i, r)| r.filter(|r| r.confidence >= DROP_SCORE).map(|r| (i, r)))
            .collect();
        // Words once the whole page is read: its own words take back wrongly recovered spaces.
        let mut lines: Vec<Vec<rec::Glyph>> = kept.iter_mut().map(|(_, r)| std::mem::take(&mut r.glyphs)).collect();
        rec::rejoin_split_words_seen(&mut lines, &others);
        for ((i, LineRead { confidence: conf, px_per_frame, .. }), glyphs) in kept.into_iter().zip(lines) {
            let r = crops[i];
            let (u, _) = r.axes();
            // Word boxes stay inside the detected box (the crop shares its left end): a line's
            // last word carried into the margin narrowed the gutter pdftotext sees between the
            // searchable PDF's columns (the magazine's 7 pt gutter read as one block).
            let end = line_rects[i].w;
            let words = rec::words(&glyphs)
                .into_iter()
                .map(|s| {
                    let a = (s.x0 * px_per_frame).min(end - 1.0);
                    let b = (s.x1 * px_per_frame).min(end).max(a + 1.0);
                    let mid = (a + b) / 2.0 - r.w / 2.0;
                    let wr = RotRect { cx: r.cx + u[0] * mid, cy: r.cy + u[1] * mid, w: b - a, h: r.h, angle: r.angle };
                    (s.text, s.confidence, wr, s.alternatives)
                })
                .collect();
            results[i] = Some((line_rects[i], words, conf));
        }
        if self.tuning.timing {
            let confidence = if conf_chars == 0 { 1.0 } else { conf_sum / conf_chars as f32 };
            eprintln!("page confidence {confidence:.3} over {conf_chars} characters");
        }
        Ok(Read::Done(results.into_iter().flatten().collect()))
    }
}

/// How far past the right end of its detected box a line is read, in line heights: the
/// detector's box often stops short of a line's final full stop or comma, which the
/// recogniser then never saw (on the generated language pages `ging.`, `kindugu.`,
/// `pravima.`, `taxi.`, `jaźń,` lost their last character; the brochure its full stops).
/// Only the right end: carried past both ends (0.15 / 0.25 of the height) the left end
/// pulled in neighbours (docs/ocr.md, step 4).
pub(crate) const LINE_END_MARGIN: f32 = 0.3;

/// The reads of one batch: (line index, read) for each line with characters.
type BatchReads = Vec<(usize, LineRead)>;

/// One read of a line.
#[derive(Clone)]
struct LineRead {
    glyphs: Vec<rec::Glyph>,
    /// Mean confidence of its characters.
    confidence: f32,
    /// How many characters (not spaces) it has.
    chars: usize,
    /// Page pixels per output frame.
    px_per_frame: f32,
}

/// A recognised line: its rectangle, its words (text, confidence, rectangle), its confidence.
pub(crate) type Line = crate::gutter::RecLine;

/// What [`Ocr::recognise_lines`] read.
pub(crate) enum Read {
    /// Every line (those kept).
    Done(Vec<Line>),
    /// The probe's lines read with this mean character confidence, under the one asked for;
    /// the others were not read.
    Doubtful(f32),
}

/// A line read from a squeezed crop with a mean character confidence under this is read
/// again unsqueezed ([`crate::REC_SQUEEZE`]).
pub(crate) const REREAD_BELOW: f32 = 0.95;

/// Most lines the direction classifier votes over.
const VOTE_LINES: usize = 24;

/// Indices of the largest elongated lines (at least twice as wide as tall), largest first,
/// at most [`VOTE_LINES`]: what the direction classifier votes over.
pub(crate) fn widest_lines(rects: &[RotRect]) -> Vec<usize> {
    let mut cand: Vec<usize> = (0..rects.len()).filter(|&i| rects[i].w >= 2.0 * rects[i].h).collect();
    cand.sort_by(|&a, &b| (rects[b].w * rects[b].h).total_cmp(&(rects[a].w * rects[a].h)));
    cand.truncate(VOTE_LINES);
    cand
}

/// The lines the probe reads: the [`crate::PROBE_LINES`] elongated lines (twice as wide as
/// tall) of the widest recognition crops, widest first: the most characters per line, and
/// what the widest-first batches read first. Why not the vote's [`widest_lines`] (largest
/// area): a page's headings are large but tall, so their crops are narrow and read in late
/// batches; the probe waited for them, and an upside-down LinnSequencer page was read to
/// 2,874 of its 3,742 characters before the classifier was asked.
pub(crate) fn probe_lines(rects: &[RotRect]) -> Vec<usize> {
    let mut cand: Vec<usize> = (0..rects.len()).filter(|&i| rects[i].w >= 2.0 * rects[i].h).collect();
    cand.sort_by(|&a, &b| (rects[b].w / rects[b].h).total_cmp(&(rects[a].w / rects[a].h)));
    cand.truncate(crate::PROBE_LINES);
    cand
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vote and the probe take the largest lines that are lines (twice as wide as tall),
    /// largest first, at most [`VOTE_LINES`].
    #[test]
    fn widest_lines_are_the_largest_elongated_boxes_largest_first() {
        let r = |w: f32, h: f32| RotRect { cx: 100.0, cy: 100.0, w, h, angle: 0.0 };
        let rects = [r(100.0, 40.0), r(60.0, 40.0), r(300.0, 30.0), r(90.0, 45.0), r(500.0, 20.0)];
        assert_eq!(widest_lines(&rects), vec![4, 2, 3, 0]);
        let many: Vec<RotRect> = (0..40).map(|i| r(100.0 + i as f32, 20.0)).collect();
        let w = widest_lines(&many);
        assert_eq!(w.len(), VOTE_LINES);
        assert_eq!(w[0], 39);
    }

    /// The probe takes the lines of the widest crops (longest for their height), not the
    /// largest: a tall heading is read late and is left out.
    #[test]
    fn probe_lines_are_the_widest_crops_widest_first() {
        let r = |w: f32, h: f32| RotRect { cx: 100.0, cy: 100.0, w, h, angle: 0.0 };
        let rects = [r(900.0, 120.0), r(600.0, 20.0), r(300.0, 30.0), r(90.0, 45.0), r(500.0, 20.0)];
        assert_eq!(probe_lines(&rects), vec![1, 4, 2, 0, 3]);
        let many: Vec<RotRect> = (0..40).map(|i| r(100.0 + i as f32, 20.0)).collect();
        let p = probe_lines(&many);
        assert_eq!(p.len(), crate::PROBE_LINES);
        assert_eq!(p[0], 39);
    }
}

//! OCR on pixel buffers with PaddleOCR models (PP-OCRv6 tiny detection and recognition,
//! the PP-OCR 0/180 direction classifier) through ONNX Runtime.
//!
//! No MuPDF here: callers hand in grey or RGB pixels ([`Image`]) and get back lines and
//! words with boxes in the input's pixel coordinates ([`PageText`]).
//!
//! # Runtime
//!
//! ONNX Runtime is loaded at run time (`ort` with `load-dynamic`): the build with OpenVINO's
//! execution provider that the manifest names ([`ModelFiles::openvino_runtime`], PyPI
//! `onnxruntime-openvino`, x86-64) when it is installed and [`OcrTuning::openvino`] is on,
//! else the path given to [`Ocr::new`] (the service passes the `libonnxruntime.so.1` shipped
//! in the npm package `onnxruntime-node`). Nothing is downloaded, at build or at run time. One [`Ocr`] holds
//! the three sessions (detection, direction classifier, recognition), created once and
//! reused; each session is behind a mutex, so concurrent pages in one process take turns
//! per model run. Model files are checked against their SHA-256 before loading
//! ([`ModelFiles`]).
//!
//! # Threads
//!
//! [`OcrConfig::intra_threads`] is ONNX Runtime's intra-op pool size per session (inter-op
//! is 1: the models are sequential). With [`OcrConfig::machine_lock`], every model run
//! holds an exclusive `flock` on that file, shared by every process on the machine: the
//! service gives each worker's sessions all the cores and lets one model run at a time
//! use them, so processes x intra-op threads never exceed the cores, a lone job gets every
//! core, and the image work between runs (crops, decoding, layout) overlaps another
//! process's run (see docs/ocr.md). With more than one thread, the recogniser is loaded as
//! one single-threaded session per thread and a page's recognition batches are read side by
//! side, under one hold of the lock ([`OcrTuning::rec_parallel`]): the same batches and
//! reads, without the hand-overs between threads inside every layer of a shared run.
//!
//! # Pipeline ([`Ocr::recognise`])
//!
//! 1. grey conversion; inputs above [`MAX_INPUT_SIDE`] pixels are shrunk by an integer factor;
//! 2. detection on a copy whose longest side is at most [`OcrConfig::det_max_side`]
//!    (multiple of 32), DB post-processing in [`det`];
//! 3. page orientation: if most elongated boxes are taller than wide, the page is turned by
//!    90 degrees; then the direction classifier votes 0/180 over the widest lines (weighted
//!    by confidence) and the page is turned by 180 degrees if the votes say so;
//! 4. each line is cropped from the upright full-resolution page along its rotated
//!    rectangle, straight to a height of 48 pixels (bilinear), and recognised in batches of
//!    similar widths; CTC decoding keeps frame positions, which give the word boxes and
//!    recover dropped spaces ([`rec`]); a letter in doubt between its cases takes the case of
//!    the letter before it ([`case`]), and a recovered space is taken back where the page
//!    reads the joined word elsewhere ([`rec::rejoin_split_words`]);
//! 5. on a page whose opening quotes read typographic (‘ “), the apostrophes and closing quotes
//!    read straight take the typographic form ([`quotes`]);
//! 6. lines the detector ran across a column gutter are cut there, and lines are ordered by a
//!    recursive XY-cut with column detection on their deskewed boxes ([`gutter`], [`layout`]).
//!
//! # Languages
//!
//! The manifest lists one or more recognisers, each with the Tesseract-style language codes
//! its dictionary covers ([`languages`]). The first is the default and is loaded by
//! [`Ocr::new`]; the others are loaded the first time a request needs them
//! ([`Ocr::recognise_with`]), once per process, and kept. [`lexicon`] corrects the words
//! of a page read for named languages against their Hunspell dictionaries (the engine
//! applies it).

#![deny(missing_docs)]

pub mod case;
mod config;
pub mod det;
pub mod fuse;
pub mod gutter;
pub mod image;
pub mod inverted_marks;
pub mod languages;
pub mod layout;
pub mod lexicon;
mod models;
pub mod quotes;
pub mod rec;
mod recognise;
mod sessions;
pub mod tesseract;
mod timing;

use std::sync::{Arc, Mutex};

use ort::session::Session;
use ort::value::Tensor;
use serde::{Deserialize, Serialize};

pub use crate::config::{OcrConfig, OcrTuning};
pub use crate::det::RotRect;
pub use crate::image::{Grey, Image};
pub use crate::languages::{LanguageError, LanguageSets};
use crate::models::environment;
pub use crate::models::{ModelFile, ModelFiles, RecogniserFiles};
use crate::recognise::{probe_lines, BatchPolicy, Read};
use crate::sessions::{load_dict, load_session, load_sessions, Backend};
pub use crate::timing::{process_cpu_ms, StageTimer};

/// Errors of the OCR crate.
#[derive(Debug, thiserror::Error)]
pub enum OcrError {
    /// The runtime library or a model could not be loaded (missing file, wrong hash, bad model).
    #[error("OCR initialisation failed: {0}")]
    Init(String),
    /// The input buffer is not a valid image.
    #[error("invalid image: {0}")]
    Input(String),
    /// ONNX Runtime failed while running a model.
    #[error("inference failed: {0}")]
    Inference(String),
    /// A recogniser did not finish a page within its time.
    #[error("{0}")]
    Timeout(String),
    /// The caller's cancel check stopped the page.
    #[error("cancelled")]
    Cancelled,
}

/// Result alias.
pub type Result<T> = std::result::Result<T, OcrError>;

/// Inputs larger than this (longest side, pixels) are shrunk by an integer factor first.
pub const MAX_INPUT_SIDE: usize = 4200;
/// Default longest side of the detection input (pixels). PP-OCRv6 tiny keeps its accuracy
/// down to here on the corpus pages; at 960 the brochure's two columns merged into bands
/// (CER 14.6% vs 1.8%), at 1280 the magazine's columns did, with [`det::UNCLIP_RATIO`] 1.0.
pub const DET_MAX_SIDE: usize = 1120;
/// Height of recognition crops (the PP-OCR recognisers' input height).
pub const REC_HEIGHT: usize = 48;
/// Widest recognition crop in pixels (longer lines are squeezed).
pub const REC_MAX_WIDTH: usize = 48 * 60;
/// Horizontal scale of recognition crops relative to keeping the aspect ratio. Recognition
/// time is proportional to crop width; squeezing is within what the model saw in training
/// (PaddleOCR squeezes lines wider than its batch width). 0.8 takes 12-15% less CPU than 1.0;
/// lines it reads doubtfully are read again unsqueezed (`recognise::REREAD_BELOW`), which
/// keeps the evaluation set's CER (docs/ocr.md, step 4). `OCR_REC_SQUEEZE` sets it.
pub const REC_SQUEEZE: f32 = 0.8;
/// Narrowest recognition batch: shorter crops are padded to it (PaddleOCR pads to 320;
/// 160 measured the same CER on the corpus with less padding).
pub const REC_MIN_WIDTH: usize = 160;
/// Lines whose mean character confidence is below this are dropped (PaddleOCR's drop_score).
pub const DROP_SCORE: f32 = 0.5;
/// A page whose widest lines ([`PROBE_LINES`] of them, read first) were read with a mean
/// character confidence under this is put to the 0/180 direction classifier (and read turned
/// if it votes so and the turned page reads them more surely).
pub const DIRECTION_CHECK_BELOW: f32 = 0.9;
/// How many lines (those of the widest crops, `recognise::probe_lines`) are read first to
/// judge whether a page is upside down.
pub const PROBE_LINES: usize = 12;

/// The machine-wide lock held for one model run; unlocked when dropped.
struct MachineRun<'a>(Option<std::sync::MutexGuard<'a, std::fs::File>>);

impl Drop for MachineRun<'_> {
    fn drop(&mut self) {
        if let Some(file) = &self.0 {
            let _ = file.unlock();
        }
    }
}

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
    /// dictionary corrections of [`lexicon`]; not part of the result).
    #[serde(skip)]
    pub alternatives: Vec<Alternative>,
}

/// A character the recogniser nearly read in place of one of a word's: its runner-up at
/// the character's peak ([`rec::Glyph::runner_up`]).
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

/// Most sessions the default recogniser is loaded as ([`OcrTuning::rec_parallel`]): each
/// keeps an activation arena of its own, so memory grows with them (on more cores, each gets
/// several intra-op threads instead).
pub const REC_SESSIONS_MAX: usize = 4;

/// A recogniser's sessions and its dictionary.
struct Recogniser {
    /// One session with every intra-op thread, or (with [`OcrTuning::rec_parallel`]) one
    /// single-threaded session per thread, reading batches side by side.
    sessions: Vec<Mutex<Session>>,
    dict: Vec<String>,
    /// [`rec::other_case_classes`] of the dictionary.
    other_case: Vec<usize>,
    /// How its lines are put into runs (follows its backend).
    policy: BatchPolicy,
}

impl Recogniser {
    /// Loads the model and dictionary of `files` for `threads` threads; `side_by_side`: as
    /// several sessions ([`OcrTuning::rec_parallel`], at most [`REC_SESSIONS_MAX`]).
    #[allow(clippy::too_many_arguments)]
    fn load(
        env: &ort::environment::Environment,
        threads: usize,
        spinning: bool,
        tuning: &OcrTuning,
        side_by_side: bool,
        backend: Backend,
        files: (&ModelFile, &ModelFile),
    ) -> Result<Self> {
        let sessions = if side_by_side && tuning.rec_parallel && threads > 1 {
            let n = threads.min(REC_SESSIONS_MAX);
            load_sessions(env, n, threads / n, false, tuning.fuse, backend, files.0)?
                .into_iter()
                .map(Mutex::new)
                .collect()
        } else {
            vec![Mutex::new(load_session(env, threads, spinning, tuning.fuse, backend, files.0)?)]
        };
        let dict = load_dict(files.1)?;
        let policy = match backend {
            Backend::Cpu => BatchPolicy::BATCHES,
            Backend::OpenVino { .. } => BatchPolicy::ONE_LINE_ON_A_GRID,
        };
        Ok(Self { sessions, other_case: rec::other_case_classes(&dict), dict, policy })
    }

    /// Runs every session once on a blank line of each width in `widths`, side by side (one
    /// thread per session): OpenVINO prepares its kernels for each new input shape, and the
    /// pages' runs then find them ready ([`BatchPolicy`]).
    fn warm_up(&self, widths: &[usize]) -> Result<()> {
        let run = |session: &Mutex<Session>| -> Result<()> {
            let mut session = session.lock().map_err(|_| OcrError::Inference("poisoned".into()))?;
            for &w in widths {
                let blank =
                    Tensor::from_array(([1, 3, REC_HEIGHT, w], vec![0f32; 3 * REC_HEIGHT * w])).map_err(inference)?;
                session.run(ort::inputs![blank]).map_err(inference)?;
            }
            Ok(())
        };
        std::thread::scope(|scope| {
            let others: Vec<_> = self.sessions[1..].iter().map(|s| scope.spawn(move || run(s))).collect();
            let first = run(&self.sessions[0]);
            others
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(OcrError::Inference("warm-up panicked".into()))))
                .fold(first, Result::and)
        })
    }
}

/// The OCR engine: detection, direction and recognition sessions and the dictionaries.
pub struct Ocr {
    det: Mutex<Session>,
    cls: Mutex<Session>,
    /// One slot per recogniser of [`ModelFiles::recognisers`]; the first is loaded by
    /// [`Ocr::new`], the others at their first use.
    recognisers: Vec<Mutex<Option<Arc<Recogniser>>>>,
    recogniser_files: Vec<RecogniserFiles>,
    languages: LanguageSets,
    env: ort::environment::Environment,
    intra_threads: usize,
    spinning: bool,
    det_max_side: usize,
    tuning: OcrTuning,
    /// The default recogniser runs on OpenVINO ([`OcrTuning::openvino`] and the manifest's
    /// runtime present).
    openvino: bool,
    // The mutex keeps threads of this process to one run too: flock is held per open file,
    // so it would not keep two of our own threads apart.
    machine_lock: Option<Mutex<std::fs::File>>,
    /// Tesseract over the machine's tessdata directory, when it holds a language.
    tesseract: Option<tesseract::Tesseract>,
}

/// What reads a request's languages ([`Ocr::reader_for`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reader {
    /// An ONNX recogniser (an index into [`ModelFiles::recognisers`]).
    Model(usize),
    /// Tesseract, with these traineddata.
    Tesseract(Vec<String>),
}

/// Whether this CPU runs bfloat16 (AVX512_BF16), where OpenVINO's recogniser is the faster one.
pub fn cpu_has_bf16() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512bf16")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn inference<E: std::fmt::Display>(e: E) -> OcrError {
    OcrError::Inference(e.to_string())
}

impl Ocr {
    /// Loads ONNX Runtime (once per process) and creates the sessions of detection, the
    /// direction classifier and the default recogniser.
    pub fn new(config: &OcrConfig) -> Result<Self> {
        // ONNX Runtime with OpenVINO's execution provider when the manifest names one that is
        // installed (x86-64), else the library the caller gives (ONNX Runtime's own kernels).
        let wanted = config.tuning.openvino.unwrap_or_else(cpu_has_bf16);
        let openvino_library = config.models.openvino_runtime.as_ref().filter(|p| wanted && p.is_file());
        let libs: Vec<&std::path::Path> =
            openvino_library.into_iter().map(|p| p.as_path()).chain([config.ort_library.as_path()]).collect();
        let env = environment(&libs)?;
        // One runtime per process: the library loaded first is the one used.
        let openvino = wanted
            && <ort::ep::OpenVINO as ort::ep::ExecutionProvider>::is_available()
                .map_err(|e| OcrError::Init(format!("listing ONNX Runtime's execution providers: {e}")))?;
        let rec_backend = if openvino { Backend::OpenVino { bf16: true } } else { Backend::Cpu };
        let threads = config.intra_threads.max(1);
        // Under the machine lock the pool must not spin after a run: its threads would take
        // cycles from the process that holds the lock next (measured, 2 processes x 7
        // pages: 16.0 s spinning, 12.9 s not; one process: same).
        let spinning = config.machine_lock.is_none();
        // The detector and the direction classifier keep ONNX Runtime's kernels. On OpenVINO the
        // detector in bfloat16 lost lines of a receipt (CER 28% -> 33%); in float32 it was 8%
        // faster warm, but each new page size cost a first run ~1.5x a warm one and memory
        // (+170 MB at the first page, +3.5 MB per page size; ONNX Runtime: +95 MB, flat).
        let det = load_session(&env, threads, spinning, config.tuning.fuse, Backend::Cpu, &config.models.det)?;
        let cls = load_session(&env, threads, spinning, config.tuning.fuse, Backend::Cpu, &config.models.cls)?;
        let default = Recogniser::load(
            &env,
            threads,
            spinning,
            &config.tuning,
            true,
            rec_backend,
            (&config.models.rec, &config.models.dict),
        )?;
        let machine_lock = match &config.machine_lock {
            Some(path) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .truncate(false)
                    .write(true)
                    .open(path)
                    .map_err(|e| OcrError::Init(format!("opening the lock file {}: {e}", path.display())))?,
            )),
            None => None,
        };
        let mut files = config.models.recognisers.clone();
        if files.is_empty() {
            // Model files built by hand, without recognisers: the default reads what it reads.
            let m = &config.models;
            files.push(RecogniserFiles {
                name: "rec".into(),
                engine: "rec".into(),
                languages: Vec::new(),
                rec: m.rec.clone(),
                dict: m.dict.clone(),
            });
        }
        let mut recognisers: Vec<Mutex<Option<Arc<Recogniser>>>> = files.iter().map(|_| Mutex::new(None)).collect();
        recognisers[0] = Mutex::new(Some(Arc::new(default)));
        let ocr = Self {
            machine_lock,
            det: Mutex::new(det),
            cls: Mutex::new(cls),
            languages: LanguageSets::new(files.iter().map(|r| r.languages.clone()).collect()),
            recognisers,
            recogniser_files: files,
            env,
            intra_threads: threads,
            spinning,
            det_max_side: config.det_max_side.max(320),
            tuning: config.tuning.clone(),
            openvino,
            tesseract: tesseract::Tesseract::find(config.tessdata.as_deref()),
        };
        if openvino {
            // Every shape a page's runs can have, once, before the first page (BatchPolicy).
            let _run = ocr.machine_run()?;
            let default = ocr.recogniser(0)?;
            default.warm_up(&default.policy.run_widths(ocr.tuning.rec_min_width))?;
        }
        Ok(ocr)
    }

    /// Whether the default recogniser runs on OpenVINO ([`OcrTuning::openvino`]).
    pub fn uses_openvino(&self) -> bool {
        self.openvino
    }

    /// The recogniser (an index into [`ModelFiles::recognisers`]) that reads `languages`;
    /// `None` is the default (0). See [`languages`].
    pub fn recogniser_for(&self, languages: Option<&[String]>) -> std::result::Result<usize, LanguageError> {
        self.languages.choose(languages)
    }

    /// What reads `languages`: the first ONNX recogniser that reads them all, else Tesseract
    /// when every one is installed ([`LanguageSets::choose_reader`]).
    pub fn reader_for(&self, languages: Option<&[String]>) -> std::result::Result<Reader, LanguageError> {
        self.languages.choose_reader(languages, self.tesseract_languages())
    }

    /// The languages Tesseract reads on this machine (its installed traineddata).
    pub fn tesseract_languages(&self) -> &[String] {
        self.tesseract.as_ref().map_or(&[], |t| t.languages())
    }

    /// Whether per-stage times go to stderr ([`OcrTuning::timing`]).
    pub fn timing(&self) -> bool {
        self.tuning.timing
    }

    /// Every language code some recogniser reads: the ONNX recognisers' in manifest order,
    /// then Tesseract's installed ones.
    pub fn supported_languages(&self) -> Vec<&str> {
        let mut out = self.languages.supported();
        for code in self.tesseract_languages() {
            if !out.contains(&code.as_str()) {
                out.push(code);
            }
        }
        out
    }

    /// Engine name of a recogniser (`pp-ocrv6-tiny`, ...).
    pub fn engine_name(&self, recogniser: usize) -> &str {
        self.recogniser_files.get(recogniser).map_or("unknown", |r| r.engine.as_str())
    }

    /// Whether a recogniser's session exists in this process (the default always does;
    /// the others from their first use).
    pub fn is_loaded(&self, recogniser: usize) -> bool {
        self.recognisers.get(recogniser).is_some_and(|m| m.lock().is_ok_and(|g| g.is_some()))
    }

    /// The recogniser's session, loading it (hash checked) the first time.
    fn recogniser(&self, index: usize) -> Result<Arc<Recogniser>> {
        let slot = self.recognisers.get(index).ok_or_else(|| OcrError::Init(format!("no recogniser {index}")))?;
        // Held while loading, so concurrent first uses load the model once.
        let mut guard = slot.lock().map_err(|_| OcrError::Inference("poisoned".into()))?;
        if let Some(r) = guard.as_ref() {
            return Ok(r.clone());
        }
        let files = &self.recogniser_files[index];
        let r = Arc::new(Recogniser::load(
            &self.env,
            self.intra_threads,
            self.spinning,
            &self.tuning,
            // One session: each session keeps its own activation arena, and a second one of
            // the small language recogniser raised the ocr-lang bench's peak RSS from 649
            // to 884 MB (goal < 1 GB). ONNX Runtime's kernels, in float32: on OpenVINO in
            // bfloat16 the generated Turkish page read worse than Tesseract (0.41% vs 0.20%
            // CER), and the process with both recognisers peaked at 1,045 MB.
            false,
            Backend::Cpu,
            (&files.rec, &files.dict),
        )?);
        *guard = Some(r.clone());
        Ok(r)
    }

    /// Waits for the machine-wide lock (when configured) before a model run.
    fn machine_run(&self) -> Result<MachineRun<'_>> {
        let Some(m) = &self.machine_lock else { return Ok(MachineRun(None)) };
        let file = m.lock().map_err(|_| OcrError::Inference("poisoned".into()))?;
        file.lock().map_err(|e| OcrError::Inference(format!("locking the machine-wide OCR lock: {e}")))?;
        Ok(MachineRun(Some(file)))
    }

    /// Runs a model on `input` under its session's mutex and the machine-wide lock (released
    /// as soon as the run ends), marks `stage` on the timer, and hands the outputs to `read`.
    fn run_model<R>(
        &self,
        session: &Mutex<Session>,
        input: Tensor<f32>,
        timer: &mut StageTimer,
        stage: &str,
        read: impl FnOnce(&ort::session::SessionOutputs<'_>) -> Result<R>,
    ) -> Result<R> {
        self.run_session(session, input, timer, stage, true, read)
    }

    /// [`run_model`](Self::run_model), under the machine-wide lock only when `lock` (false:
    /// the caller holds it for a set of runs side by side).
    fn run_session<R>(
        &self,
        session: &Mutex<Session>,
        input: Tensor<f32>,
        timer: &mut StageTimer,
        stage: &str,
        lock: bool,
        read: impl FnOnce(&ort::session::SessionOutputs<'_>) -> Result<R>,
    ) -> Result<R> {
        let mut session = session.lock().map_err(|_| OcrError::Inference("poisoned".into()))?;
        let run = if lock { self.machine_run()? } else { MachineRun(None) };
        let outputs = session.run(ort::inputs![input]).map_err(inference)?;
        drop(run);
        timer.mark(stage);
        read(&outputs)
    }

    /// Recognises the text of an image with the default recogniser.
    pub fn recognise(&self, image: &Image) -> Result<PageText> {
        self.recognise_with(image, 0)
    }

    /// Recognises the text of an image with a recogniser chosen by
    /// [`recogniser_for`](Self::recogniser_for) (loaded at its first use).
    pub fn recognise_with(&self, image: &Image, recogniser: usize) -> Result<PageText> {
        let rec = self.recogniser(recogniser)?;
        let mut timer = StageTimer::new(self.tuning.timing);
        let mut grey = image.to_grey();
        let longest = grey.width.max(grey.height);
        let factor = longest.div_ceil(MAX_INPUT_SIDE).max(1);
        if factor > 1 {
            grey = grey.downscale(factor);
        }
        let scale_back = image.width as f32 / grey.width as f32;
        let scale_back_y = image.height as f32 / grey.height as f32;

        timer.mark("grey");
        // Detection.
        let rects = self.detect(&grey)?;

        // Orientation: 90 degrees?
        let elongated = rects.iter().filter(|r| r.w.max(r.h) >= 2.0 * r.w.min(r.h)).count();
        let tall = rects.iter().filter(|r| r.w.max(r.h) >= 2.0 * r.w.min(r.h) && r.h > r.w).count();
        let mut rotation: u32 = 0;
        let mut upright = grey;
        let mut rects = rects;
        if tall * 2 > elongated && tall > 0 {
            // The detector is trained on horizontal text: detect again on the turned page.
            upright = upright.rotate_cw(90);
            rects = self.detect(&upright)?;
            rotation = 90;
        }
        // Horizontal lines only (vertical text is not supported).
        rects.retain(|r| r.w >= 0.8 * r.h);
        timer.mark("orientation");
        // 0 / 180: the widest lines are read first, and only a page whose widest lines read
        // with low confidence is put to the direction classifier (text upside down reads as
        // garbage the recogniser is unsure of; running the classifier on every page cost time
        // and, on pages it misjudged, the whole page). Turned, the page must read its widest
        // lines more surely than upright, or it is read upright after all.
        let probe = &probe_lines(&rects)[..];
        let mut lines = match self.recognise_lines(&upright, &rects, &rec, Some((probe, DIRECTION_CHECK_BELOW)))? {
            Read::Done(lines) => lines,
            Read::Doubtful(upright_confidence) => {
                let mut turned = None;
                if self.vote_flip(&upright, &rects)? {
                    let (w, h) = (upright.width as f32, upright.height as f32);
                    let flipped: Vec<RotRect> =
                        rects.iter().map(|r| RotRect { cx: w - r.cx, cy: h - r.cy, ..*r }).collect();
                    let page = upright.rotate_cw(180);
                    if let Read::Done(lines) =
                        self.recognise_lines(&page, &flipped, &rec, Some((probe, upright_confidence)))?
                    {
                        turned = Some((page, lines));
                    }
                    timer.mark("rec.flipped");
                }
                match turned {
                    Some((page, lines)) => {
                        upright = page;
                        rotation = (rotation + 180) % 360;
                        lines
                    }
                    None => self.read_all(&upright, &rects, &rec)?,
                }
            }
        };
        timer.mark("rec");

        // Apostrophes and closing quotes in the page's quote style.
        quotes::apply(&mut lines);
        // Reading order in the upright frame, lines cut at column gutters, boxes deskewed.
        let (lines, order) = gutter::arrange(lines);

        let blocks = assemble(&lines, order, rotation, &upright, [scale_back, scale_back_y]);
        timer.mark("layout");
        Ok(PageText { width: image.width, height: image.height, rotation, blocks })
    }

    fn detect(&self, grey: &Grey) -> Result<Vec<RotRect>> {
        let mut timer = StageTimer::new(self.tuning.timing);
        let longest = grey.width.max(grey.height) as f32;
        let s = (self.det_max_side as f32 / longest).min(1.0);
        let round32 = |v: f32| (((v / 32.0).round() as usize) * 32).max(32);
        let dw = round32(grey.width as f32 * s);
        let dh = round32(grey.height as f32 * s);
        let pix = grey.resize(dw, dh);
        // Only the window that holds ink is detected (see [`image::ink_window`]); the
        // rectangles are mapped back by its offset.
        let Some((wx0, wy0, wx1, wy1)) = image::ink_window(&pix, dw, dh) else {
            timer.mark("det.prep blank");
            return Ok(Vec::new());
        };
        let (ww, wh) = (wx1 - wx0, wy1 - wy0);
        // PaddleOCR normalises BGR with ImageNet mean/std listed in RGB order; grey makes
        // the channel order moot apart from these constants.
        let mean = [0.485f32, 0.456, 0.406];
        let std = [0.229f32, 0.224, 0.225];
        let mut data = vec![0f32; 3 * ww * wh];
        for c in 0..3 {
            let plane = &mut data[c * ww * wh..(c + 1) * ww * wh];
            for (orow, irow) in plane.chunks_exact_mut(ww).zip(pix.chunks_exact(dw).skip(wy0)) {
                for (o, &v) in orow.iter_mut().zip(&irow[wx0..wx1]) {
                    *o = (v / 255.0 - mean[c]) / std[c];
                }
            }
        }
        let tensor = Tensor::from_array(([1usize, 3, wh, ww], data)).map_err(inference)?;
        timer.mark(&format!("det.prep {ww}x{wh} of {dw}x{dh}"));
        let (boxes, mw, mh) = self.run_model(&self.det, tensor, &mut timer, "det.run", |outputs| {
            let (shape, map) = outputs[0].try_extract_tensor::<f32>().map_err(inference)?;
            let (mh, mw) = (shape[2] as usize, shape[3] as usize);
            Ok((det::boxes_from_map(map, mw, mh, self.tuning.debug), mw, mh))
        })?;
        // Map pixels -> input pixels: the map covers the window at its own resolution.
        let sx = grey.width as f32 / dw as f32 * (ww as f32 / mw as f32);
        let sy = grey.height as f32 / dh as f32 * (wh as f32 / mh as f32);
        let (ox, oy) = (wx0 as f32 * grey.width as f32 / dw as f32, wy0 as f32 * grey.height as f32 / dh as f32);
        let rects = boxes
            .into_iter()
            .map(|b| {
                // Scale the rectangle: scale its corners, then refit.
                let c = b.rect.corners().map(|p| [ox + p[0] * sx, oy + p[1] * sy]);
                det::min_area_rect(&det::convex_hull(c.to_vec()))
            })
            .collect::<Vec<_>>();
        timer.mark(&format!("det.post {}", rects.len()));
        Ok(rects)
    }
}

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

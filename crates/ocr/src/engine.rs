//! The OCR engine ([`Ocr`]): its sessions, loaded once, the recognisers chosen for a
//! request's languages, and the runs of a model under the machine-wide lock.

use std::sync::{Arc, Mutex};

use ort::session::Session;
use ort::value::Tensor;

use crate::config::{OcrConfig, OcrTuning};
use crate::languages::{LanguageError, LanguageSets};
use crate::models::{environment, RecogniserFiles};
use crate::recogniser::Recogniser;
use crate::sessions::{load_session, Backend};
use crate::timing::StageTimer;
use crate::{inference, tesseract, OcrError, Result};

/// The machine-wide lock held for one model run; unlocked when dropped.
pub(crate) struct MachineRun<'a>(Option<std::sync::MutexGuard<'a, std::fs::File>>);

impl Drop for MachineRun<'_> {
    fn drop(&mut self) {
        if let Some(file) = &self.0 {
            let _ = file.unlock();
        }
    }
}

/// The OCR engine: detection, direction and recognition sessions and the dictionaries.
pub struct Ocr {
    pub(crate) det: Mutex<Session>,
    pub(crate) cls: Mutex<Session>,
    /// One slot per recogniser of [`ModelFiles::recognisers`](crate::ModelFiles::recognisers);
    /// the first is loaded by [`Ocr::new`], the others at their first use.
    recognisers: Vec<Mutex<Option<Arc<Recogniser>>>>,
    recogniser_files: Vec<RecogniserFiles>,
    languages: LanguageSets,
    env: ort::environment::Environment,
    intra_threads: usize,
    spinning: bool,
    pub(crate) det_max_side: usize,
    pub(crate) tuning: OcrTuning,
    /// The default recogniser runs on OpenVINO ([`OcrTuning::openvino`] and the manifest's
    /// runtime present).
    openvino: bool,
    // The mutex keeps threads of this process to one run too: flock is held per open file,
    // so it would not keep two of our own threads apart.
    machine_lock: Option<Mutex<std::fs::File>>,
    /// Tesseract over the machine's tessdata directory, when it holds a language.
    pub(crate) tesseract: Option<tesseract::Tesseract>,
}

/// What reads a request's languages ([`Ocr::reader_for`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reader {
    /// An ONNX recogniser (an index into
    /// [`ModelFiles::recognisers`](crate::ModelFiles::recognisers)).
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

    /// The recogniser (an index into
    /// [`ModelFiles::recognisers`](crate::ModelFiles::recognisers)) that reads `languages`;
    /// `None` is the default (0). See [`languages`](crate::languages).
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
    pub(crate) fn recogniser(&self, index: usize) -> Result<Arc<Recogniser>> {
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
    pub(crate) fn machine_run(&self) -> Result<MachineRun<'_>> {
        let Some(m) = &self.machine_lock else { return Ok(MachineRun(None)) };
        let file = m.lock().map_err(|_| OcrError::Inference("poisoned".into()))?;
        file.lock().map_err(|e| OcrError::Inference(format!("locking the machine-wide OCR lock: {e}")))?;
        Ok(MachineRun(Some(file)))
    }

    /// Runs a model on `input` under its session's mutex and the machine-wide lock (released
    /// as soon as the run ends), marks `stage` on the timer, and hands the outputs to `read`.
    pub(crate) fn run_model<R>(
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
    pub(crate) fn run_session<R>(
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
}

//! A recogniser's ONNX sessions and dictionary, loaded once and shared by the pages it reads.

use std::sync::Mutex;

use ort::session::Session;
use ort::value::Tensor;

use crate::batches::BatchPolicy;
use crate::config::OcrTuning;
use crate::models::ModelFile;
use crate::sessions::{load_dict, load_session, load_sessions, Backend};
use crate::{inference, rec, OcrError, Result, REC_HEIGHT};

/// Most sessions the default recogniser is loaded as ([`OcrTuning::rec_parallel`]): each
/// keeps an activation arena of its own, so memory grows with them (on more cores, each gets
/// several intra-op threads instead).
pub const REC_SESSIONS_MAX: usize = 4;

/// A recogniser's sessions and its dictionary.
pub(crate) struct Recogniser {
    /// One session with every intra-op thread, or (with [`OcrTuning::rec_parallel`]) one
    /// single-threaded session per thread, reading batches side by side.
    pub(crate) sessions: Vec<Mutex<Session>>,
    pub(crate) dict: Vec<String>,
    /// [`rec::other_case_classes`] of the dictionary.
    pub(crate) other_case: Vec<usize>,
    /// How its lines are put into runs (follows its backend).
    pub(crate) policy: BatchPolicy,
}

impl Recogniser {
    /// Loads the model and dictionary of `files` for `threads` threads; `side_by_side`: as
    /// several sessions ([`OcrTuning::rec_parallel`], at most [`REC_SESSIONS_MAX`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn load(
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
    pub(crate) fn warm_up(&self, widths: &[usize]) -> Result<()> {
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

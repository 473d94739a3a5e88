//! Loading of model files into ONNX Runtime sessions (hash checked, graph rewrites applied)
//! and of recognition dictionaries (full-width forms folded to ASCII).

use ort::session::builder::GraphOptimizationLevel;
use ort::session::Session;

use crate::models::read_verified;
use crate::{fuse, ModelFile, OcrError, Result};

/// What runs a session's model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// ONNX Runtime's own CPU kernels, in float32.
    Cpu,
    /// OpenVINO's CPU plugin, through ONNX Runtime's OpenVINO execution provider; `bf16`:
    /// with bfloat16 inference precision (OpenVINO keeps float32 on a CPU without bfloat16
    /// instructions), else float32.
    OpenVino { bf16: bool },
}

/// Creates a session for a model file (hash checked, graph rewrites applied).
pub(crate) fn load_session(
    env: &ort::environment::Environment,
    threads: usize,
    spinning: bool,
    fuse_graph: bool,
    backend: Backend,
    f: &ModelFile,
) -> Result<Session> {
    let mut one = load_sessions(env, 1, threads, spinning, fuse_graph, backend, f)?;
    Ok(one.remove(0))
}

/// Creates `count` sessions of one model file, each with `threads` intra-op threads; the file
/// is read, hash checked and rewritten once for all of them.
pub(crate) fn load_sessions(
    env: &ort::environment::Environment,
    count: usize,
    threads: usize,
    spinning: bool,
    fuse_graph: bool,
    backend: Backend,
    f: &ModelFile,
) -> Result<Vec<Session>> {
    let verified = read_verified(f)?;
    // Exact rewrites ONNX Runtime does not do itself (see [`fuse`]); a model they do not
    // understand is loaded as it is; [`OcrTuning::fuse`] false loads it unchanged (the
    // tests compare both).
    let bytes = if fuse_graph { fuse::optimise(&verified).map(|(b, _)| b).unwrap_or(verified) } else { verified };
    let build = || -> ort::Result<Session> {
        let mut builder = Session::builder(env)?;
        if let Backend::OpenVino { bf16 } = backend {
            builder = builder.with_execution_providers([openvino(threads, bf16)])?;
        }
        builder
            .with_optimization_level(GraphOptimizationLevel::Level3)?
            .with_memory_pattern(false)?
            .with_intra_threads(threads)?
            .with_inter_threads(1)?
            .with_intra_op_spinning(spinning)?
            .commit_from_memory(&bytes)
    };
    (0..count.max(1)).map(|_| build().map_err(|e| OcrError::Init(format!("{}: {e}", f.path.display())))).collect()
}

/// The OpenVINO execution provider on `threads` threads, float32 or bfloat16 set explicitly
/// (OpenVINO's default on a CPU with bfloat16 is bfloat16). Threads are not pinned to cores:
/// OpenVINO pins by default without knowing the machine's other workers, and two
/// single-threaded processes then shared one core (measured: 200 runs took 1.16-1.19 s in each
/// of two processes side by side against 0.49 s alone; unpinned 0.52-0.54 s). Registration
/// failing is an error, not a silent fall-back to ONNX Runtime's kernels (the batching is
/// chosen for OpenVINO).
fn openvino(threads: usize, bf16: bool) -> ort::ep::ExecutionProviderDispatch {
    use ort::ep::ArbitrarilyConfigurableExecutionProvider;
    let precision = if bf16 { "bf16" } else { "f32" };
    let config = format!(
        r#"{{"CPU":{{"INFERENCE_PRECISION_HINT":"{precision}","INFERENCE_NUM_THREADS":"{threads}","ENABLE_CPU_PINNING":"NO"}}}}"#
    );
    ort::ep::OpenVINO::default()
        .with_device_type("CPU")
        .with_num_threads(threads)
        .with_arbitrary_config("load_config", config)
        .build()
        .error_on_failure()
}

/// Reads a recognition dictionary (hash checked), full-width forms folded to ASCII.
pub(crate) fn load_dict(f: &ModelFile) -> Result<Vec<String>> {
    let bytes = read_verified(f)?;
    Ok(String::from_utf8_lossy(&bytes).lines().map(|l| ascii_fold(l.trim_end_matches('\r'))).collect())
}

/// Maps the dictionary's full-width forms (U+FF01-FF5E, U+3000) to ASCII: the Chinese
/// recogniser often reads ':' or ',' as their full-width twins.
fn ascii_fold(s: &str) -> String {
    s.chars()
        .map(|c| match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            0x3000 => ' ',
            _ => c,
        })
        .collect()
}

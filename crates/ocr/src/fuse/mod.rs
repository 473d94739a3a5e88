//! Exact graph simplifications of the PP-OCR models, applied in memory at load time
//! (the files on disk, and their checked SHA-256, stay as published).
//!
//! Why: the models were exported from Paddle (paddle2onnx, opset 9) with every weight as a
//! `Constant` node and two patterns ONNX Runtime does not fuse, which made about half of
//! the recogniser's time element-wise passes over memory (profiled: Conv 32%, Mul 20%,
//! Add 17%, Clip 9%, Div 5%):
//!
//! 1. `Conv -> Mul(const) -> Add(const)` (the learnable affine of PP-LCNetV3's blocks):
//!    folded into the convolution's weights and bias (`W' = W * s`, `b' = b * s + t`), for
//!    scalar or per-output-channel constants. Exact up to float rounding.
//! 2. hard-swish written as `x * Clip(x + 3, 0, 6) / 6` (four passes): rewritten as
//!    `x * HardSigmoid(x)` with alpha 1/6 and beta 1/2 (two passes), the same function.
//! 3. `Mul(const) -> Add(const) -> Conv` where the convolution is 1x1 without padding (the
//!    affine after an activation, feeding a pointwise convolution): folded into that
//!    convolution (`W'[o][i] = W[o][i] * s[i]`, `b'[o] = b[o] + sum_i W[o][i] * t[i]`).
//!    Only for 1x1 convolutions without padding, where it is exact (with padding, the
//!    padded border would change).
//! 4. The same `Mul(const) -> Add(const)` before any other convolution (PP-LCNetV3's
//!    affine before each padded depthwise convolution): rewritten as a 1x1 depthwise
//!    convolution with weight `s` and bias `t` per channel, the same arithmetic. Why: ONNX
//!    Runtime runs convolutions in its blocked NCHWc layout, but a `Mul`/`Add` by a constant
//!    is not an NCHWc operation, so each of these pairs cost a reorder out of the blocked
//!    layout, two passes, and a reorder back (15% of the recogniser's time, profiled); as a
//!    convolution it stays in the blocked layout as one pass. Outputs are bit-identical
//!    (measured: recogniser 24.0 -> 20.3 us per input column on 2 threads, detector 145 ->
//!    135 ms for a 1280 x 992 page).
//!
//! 5. The recogniser's head, `MatMul(const) -> Add(const)` twice then `Softmax` on the
//!    `[N, T, C]` features (PP-OCRv6's two linear layers): ONNX Runtime fuses `MatMul` and
//!    `Add` into one `Gemm` only for 2-D inputs, so the bias of the 6,906-class layer was a
//!    pass of its own over the largest tensor of the model. The features are reshaped to
//!    `[N*T, K]` before the head, each pair becomes a `Gemm` (the bias is where its sum
//!    starts), and the logits are reshaped back to `[N, T, C]` (the first two dimensions read
//!    from the features' shape) for the `Softmax`, as before. Outputs bit-identical
//!    (measured: PP-OCRv6 tiny 56.9 -> 52.3 ms for an 8 x 48 x 640 batch on one thread; the
//!    7 corpus OCR pages 3.11 -> 2.98 s of recognition and detection, the same text).
//!
//! Measured on the recogniser (a 10 x 48 x 480 batch, 2 threads): about 1.4x less CPU
//! for the same outputs (max difference 3e-6 on random inputs); tests/fuse.rs checks
//! that every model computes the same outputs before and after.

mod graph;
pub mod proto;
mod rewrites;

use std::collections::{HashMap, HashSet};

use graph::{
    Graph, Node, Tensor, ATTR_T, GRAPH_INITIALIZER, GRAPH_NODE, GRAPH_OUTPUT, MODEL_GRAPH, TENSOR_NAME, VALUE_INFO_NAME,
};
use proto::{encode, parse, Field};
use rewrites::{affine_as_depthwise, fold_after_conv, fold_before_conv, head_as_gemm, rewrite_hardswish};

/// What [`optimise`] changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Affine `Mul`/`Add` pairs folded into the convolution before them.
    pub folded_after_conv: usize,
    /// Hard-swish patterns rewritten.
    pub hardswish: usize,
    /// Affine pairs folded into the 1x1 convolution after them.
    pub folded_before_conv: usize,
    /// Affine pairs before other convolutions rewritten as 1x1 depthwise convolutions.
    pub affine_as_depthwise: usize,
    /// `MatMul -> Add` pairs of a 3-D head run as a 2-D `Gemm`.
    pub head_as_gemm: usize,
}

impl Stats {
    /// Rewrites of every kind.
    pub fn total(&self) -> usize {
        self.folded_after_conv + self.hardswish + self.folded_before_conv + self.affine_as_depthwise + self.head_as_gemm
    }
}

/// Applies the rewrites to a serialised ONNX model. Returns the new model and what changed.
pub fn optimise(model: &[u8]) -> Result<(Vec<u8>, Stats), String> {
    let mut model_fields = parse(model)?;
    let gi = model_fields.iter().position(|f| f.number == MODEL_GRAPH).ok_or("model has no graph")?;
    let graph_fields = parse(model_fields[gi].as_bytes().ok_or("graph is not a message")?)?;

    let mut nodes = Vec::new();
    let mut rest = Vec::new();
    let mut constants = HashMap::new();
    let mut graph_outputs = HashSet::new();
    for f in graph_fields {
        match f.number {
            GRAPH_NODE => {
                let n = Node::decode(f.as_bytes().ok_or("node is not a message")?)?;
                if n.is("Constant") && n.outputs.len() == 1 {
                    let value = n.attribute("value").and_then(|a| a.iter().find(|f| f.number == ATTR_T));
                    if let Some(t) = value.and_then(|f| f.as_bytes()).and_then(Tensor::decode) {
                        constants.insert(n.outputs[0].clone(), t);
                    }
                }
                nodes.push(Some(n));
            }
            _ => {
                if f.number == GRAPH_INITIALIZER {
                    let bytes = f.as_bytes().ok_or("initializer is not a message")?;
                    let name = parse(bytes)?
                        .into_iter()
                        .find(|t| t.number == TENSOR_NAME)
                        .and_then(|t| t.as_str().map(str::to_owned));
                    if let (Some(name), Some(t)) = (name, Tensor::decode(bytes)) {
                        constants.insert(name, t);
                    }
                }
                if f.number == GRAPH_OUTPUT {
                    let vi = parse(f.as_bytes().ok_or("output is not a message")?)?;
                    if let Some(name) = vi.iter().find(|v| v.number == VALUE_INFO_NAME).and_then(Field::as_str) {
                        graph_outputs.insert(name.to_owned());
                    }
                }
                rest.push(f);
            }
        }
    }
    let mut g = Graph { nodes, constants, graph_outputs, fresh: 0 };
    let mut inserted = Vec::new();
    let mut stats = Stats { folded_after_conv: fold_after_conv(&mut g, &mut inserted), ..Stats::default() };
    stats.hardswish = rewrite_hardswish(&mut g, &mut inserted);
    stats.folded_before_conv = fold_before_conv(&mut g, &mut inserted);
    stats.affine_as_depthwise = affine_as_depthwise(&mut g, &mut inserted);
    stats.head_as_gemm = head_as_gemm(&mut g, &mut inserted);

    // New nodes go just before the node they were made for, so the order stays topological.
    let mut by_position: HashMap<usize, Vec<Node>> = HashMap::new();
    for (at, n) in inserted {
        by_position.entry(at).or_default().push(n);
    }
    let mut ordered: Vec<Node> = Vec::new();
    for (i, n) in g.nodes.into_iter().enumerate() {
        ordered.extend(by_position.remove(&i).unwrap_or_default());
        ordered.extend(n);
    }
    // Drop nodes nothing reads any more (the replaced Add/Clip/Mul and old weights).
    let mut live: HashSet<String> = g.graph_outputs.clone();
    let mut kept = Vec::new();
    for n in ordered.into_iter().rev() {
        if n.outputs.iter().any(|o| live.contains(o)) {
            live.extend(n.inputs.iter().cloned());
            kept.push(n);
        }
    }
    kept.reverse();

    let mut new_graph: Vec<Field> = kept.iter().map(|n| Field::bytes(GRAPH_NODE, n.encode())).collect();
    new_graph.extend(rest);
    model_fields[gi] = Field::bytes(MODEL_GRAPH, encode(&new_graph));
    Ok((encode(&model_fields), stats))
}

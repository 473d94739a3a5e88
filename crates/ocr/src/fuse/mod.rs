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

pub mod proto;

use std::collections::{HashMap, HashSet};

use proto::{encode, parse, varints, Field, Value};

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

// ONNX field numbers (onnx.proto).
const MODEL_GRAPH: u32 = 7;
const GRAPH_NODE: u32 = 1;
const GRAPH_INITIALIZER: u32 = 5;
const GRAPH_OUTPUT: u32 = 12;
const NODE_INPUT: u32 = 1;
const NODE_OUTPUT: u32 = 2;
const NODE_OP_TYPE: u32 = 4;
const NODE_ATTRIBUTE: u32 = 5;
const NODE_DOMAIN: u32 = 7;
const ATTR_NAME: u32 = 1;
const ATTR_F: u32 = 2;
const ATTR_I: u32 = 3;
const ATTR_T: u32 = 5;
const ATTR_INTS: u32 = 8;
const ATTR_TYPE: u32 = 20;
const ATTR_TYPE_FLOAT: u64 = 1;
const ATTR_TYPE_INT: u64 = 2;
const ATTR_TYPE_TENSOR: u64 = 4;
const TENSOR_DIMS: u32 = 1;
const TENSOR_DATA_TYPE: u32 = 2;
const TENSOR_FLOAT_DATA: u32 = 4;
const TENSOR_NAME: u32 = 8;
const TENSOR_RAW_DATA: u32 = 9;
const TENSOR_FLOAT: u64 = 1;
const TENSOR_INT64: u64 = 7;
const VALUE_INFO_NAME: u32 = 1;

/// A float tensor.
#[derive(Clone, Debug, PartialEq)]
struct Tensor {
    dims: Vec<i64>,
    data: Vec<f32>,
}

impl Tensor {
    /// Reads a `TensorProto` holding floats; `None` for other types or external data.
    fn decode(bytes: &[u8]) -> Option<Self> {
        let fields = parse(bytes).ok()?;
        let dtype = fields.iter().find(|f| f.number == TENSOR_DATA_TYPE).map(|f| match f.value {
            Value::Varint(v) => v,
            _ => 0,
        });
        if dtype != Some(TENSOR_FLOAT) {
            return None;
        }
        let dims = varints(&fields, TENSOR_DIMS).ok()?;
        let mut data = Vec::new();
        for f in &fields {
            match (f.number, &f.value) {
                (TENSOR_RAW_DATA, Value::Bytes(b)) => {
                    data.extend(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())))
                }
                (TENSOR_FLOAT_DATA, Value::Bytes(b)) => {
                    data.extend(b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())))
                }
                (TENSOR_FLOAT_DATA, Value::Fixed32(v)) => data.push(f32::from_bits(*v)),
                _ => {}
            }
        }
        let n: i64 = dims.iter().product();
        (n >= 0 && data.len() == n as usize).then_some(Self { dims, data })
    }

    fn encode(&self, name: &str) -> Vec<u8> {
        let mut dims = Vec::new();
        for &d in &self.dims {
            proto::write_varint(&mut dims, d as u64);
        }
        let raw: Vec<u8> = self.data.iter().flat_map(|v| v.to_le_bytes()).collect();
        encode(&[
            Field::bytes(TENSOR_DIMS, dims),
            Field::varint(TENSOR_DATA_TYPE, TENSOR_FLOAT),
            Field::string(TENSOR_NAME, name),
            Field::bytes(TENSOR_RAW_DATA, raw),
        ])
    }

    /// The value for channel `c` of `channels` if this is a scalar or a per-channel
    /// constant of an NCHW tensor (`[C,1,1]` or `[1,C,1,1]`).
    fn per_channel(&self, channels: usize) -> Option<Vec<f32>> {
        let n = self.data.len();
        if n == 1 {
            return Some(vec![self.data[0]; channels]);
        }
        let shape_ok = match self.dims.as_slice() {
            [c, 1, 1] | [1, c, 1, 1] => *c as usize == channels,
            _ => false,
        };
        (shape_ok && n == channels).then(|| self.data.clone())
    }

    fn scalar(&self) -> Option<f32> {
        (self.data.len() == 1).then(|| self.data[0])
    }
}

/// A node: the fields this pass reads, plus everything else kept as it was.
#[derive(Clone, Debug)]
struct Node {
    inputs: Vec<String>,
    outputs: Vec<String>,
    op: String,
    domain: String,
    attributes: Vec<Vec<Field>>,
    other: Vec<Field>,
}

impl Node {
    fn decode(bytes: &[u8]) -> Result<Self, String> {
        let mut n = Node {
            inputs: vec![],
            outputs: vec![],
            op: String::new(),
            domain: String::new(),
            attributes: vec![],
            other: vec![],
        };
        for f in parse(bytes)? {
            let text = || f.as_str().map(str::to_owned).ok_or_else(|| format!("node field {} is not text", f.number));
            match f.number {
                NODE_INPUT => n.inputs.push(text()?),
                NODE_OUTPUT => n.outputs.push(text()?),
                NODE_OP_TYPE => n.op = text()?,
                NODE_DOMAIN => n.domain = text()?,
                NODE_ATTRIBUTE => n.attributes.push(parse(f.as_bytes().ok_or("attribute is not a message")?)?),
                _ => n.other.push(f),
            }
        }
        Ok(n)
    }

    fn encode(&self) -> Vec<u8> {
        let mut fields: Vec<Field> = self.inputs.iter().map(|s| Field::string(NODE_INPUT, s)).collect();
        fields.extend(self.outputs.iter().map(|s| Field::string(NODE_OUTPUT, s)));
        fields.extend(self.other.iter().cloned());
        fields.push(Field::string(NODE_OP_TYPE, &self.op));
        fields.extend(self.attributes.iter().map(|a| Field::bytes(NODE_ATTRIBUTE, encode(a))));
        if !self.domain.is_empty() {
            fields.push(Field::string(NODE_DOMAIN, &self.domain));
        }
        encode(&fields)
    }

    fn is(&self, op: &str) -> bool {
        self.op == op && (self.domain.is_empty() || self.domain == "ai.onnx")
    }

    fn attribute(&self, name: &str) -> Option<&[Field]> {
        self.attributes
            .iter()
            .find(|a| a.iter().any(|f| f.number == ATTR_NAME && f.as_str() == Some(name)))
            .map(Vec::as_slice)
    }

    fn float_attribute(&self, name: &str) -> Option<f32> {
        self.attribute(name)?.iter().find(|f| f.number == ATTR_F).and_then(|f| match f.value {
            Value::Fixed32(v) => Some(f32::from_bits(v)),
            _ => None,
        })
    }

    fn int_attribute(&self, name: &str) -> Option<i64> {
        self.attribute(name)?.iter().find(|f| f.number == ATTR_I).and_then(|f| match f.value {
            Value::Varint(v) => Some(v as i64),
            _ => None,
        })
    }

    fn ints_attribute(&self, name: &str) -> Option<Vec<i64>> {
        self.attribute(name).and_then(|a| varints(a, ATTR_INTS).ok())
    }

    fn constant(name: &str, t: &Tensor) -> Self {
        Node::constant_of(name, t.encode(name))
    }

    /// A `Constant` node whose value is the encoded `TensorProto` `tensor`.
    fn constant_of(name: &str, tensor: Vec<u8>) -> Self {
        Node {
            inputs: vec![],
            outputs: vec![name.to_owned()],
            op: "Constant".into(),
            domain: String::new(),
            attributes: vec![vec![
                Field::string(ATTR_NAME, "value"),
                Field::bytes(ATTR_T, tensor),
                Field::varint(ATTR_TYPE, ATTR_TYPE_TENSOR),
            ]],
            other: vec![],
        }
    }

    /// A 1x1 convolution with one group per channel (`inputs`: x, weight, bias).
    fn depthwise_1x1(inputs: &[&str], output: &str, channels: usize) -> Self {
        Node::with_int("Conv", inputs, output, "group", channels as i64)
    }

    /// A constant 1-D int64 tensor (shapes and indices).
    fn int64_constant(name: &str, values: &[i64]) -> Self {
        let mut dims = Vec::new();
        proto::write_varint(&mut dims, values.len() as u64);
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let tensor = encode(&[
            Field::bytes(TENSOR_DIMS, dims),
            Field::varint(TENSOR_DATA_TYPE, TENSOR_INT64),
            Field::string(TENSOR_NAME, name),
            Field::bytes(TENSOR_RAW_DATA, raw),
        ]);
        Node::constant_of(name, tensor)
    }

    /// A node with one int attribute.
    fn with_int(op: &str, inputs: &[&str], output: &str, name: &str, value: i64) -> Self {
        let attribute = vec![
            Field::string(ATTR_NAME, name),
            Field::varint(ATTR_I, value as u64),
            Field::varint(ATTR_TYPE, ATTR_TYPE_INT),
        ];
        Node { attributes: vec![attribute], ..Node::simple(op, inputs, output, &[]) }
    }

    fn simple(op: &str, inputs: &[&str], output: &str, float_attributes: &[(&str, f32)]) -> Self {
        Node {
            inputs: inputs.iter().map(|s| s.to_string()).collect(),
            outputs: vec![output.to_owned()],
            op: op.into(),
            domain: String::new(),
            attributes: float_attributes
                .iter()
                .map(|(n, v)| {
                    vec![
                        Field::string(ATTR_NAME, n),
                        Field::float(ATTR_F, *v),
                        Field::varint(ATTR_TYPE, ATTR_TYPE_FLOAT),
                    ]
                })
                .collect(),
            other: vec![],
        }
    }
}

/// `y = input * scale + shift` per channel, as a `Mul` node and an `Add` node.
struct Affine {
    mul: usize,
    add: usize,
    scale: Vec<f32>,
    shift: Vec<f32>,
    input: String,
}

/// The graph being edited: nodes (`None` once removed), constants by name.
struct Graph {
    nodes: Vec<Option<Node>>,
    constants: HashMap<String, Tensor>,
    graph_outputs: HashSet<String>,
    fresh: usize,
}

impl Graph {
    fn consumers(&self, name: &str) -> Vec<usize> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.as_ref().is_some_and(|n| n.inputs.iter().any(|i| i == name)))
            .map(|(i, _)| i)
            .collect()
    }

    /// The node that is the only user of `name` (and `name` is not a graph output).
    fn sole_consumer(&self, name: &str) -> Option<usize> {
        if self.graph_outputs.contains(name) {
            return None;
        }
        match self.consumers(name).as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    fn producer(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.as_ref().is_some_and(|n| n.outputs.iter().any(|o| o == name)))
    }

    fn node(&self, i: usize) -> &Node {
        self.nodes[i].as_ref().expect("live node")
    }

    /// For a binary node with one constant input: (the constant, the other input).
    fn constant_operand(&self, i: usize) -> Option<(&Tensor, String)> {
        let n = self.node(i);
        let [a, b] = n.inputs.as_slice() else { return None };
        match (self.constants.get(a), self.constants.get(b)) {
            (Some(t), None) => Some((t, b.clone())),
            (None, Some(t)) => Some((t, a.clone())),
            _ => None,
        }
    }

    /// Adds a constant node before node `at`'s position; returns its name.
    fn add_constant(&mut self, at: usize, base: &str, t: Tensor, inserted: &mut Vec<(usize, Node)>) -> String {
        self.fresh += 1;
        let name = format!("{base}__fused{}", self.fresh);
        inserted.push((at, Node::constant(&name, &t)));
        self.constants.insert(name.clone(), t);
        name
    }

    /// Input channels of convolution `i` (weight `[O, I/groups, kh, kw]`).
    fn conv_input_channels(&self, i: usize) -> Option<usize> {
        let (w, _, _) = self.conv_params(i)?;
        let groups = self.node(i).int_attribute("group").unwrap_or(1).max(1) as usize;
        Some(w.dims[1] as usize * groups)
    }

    /// The `Mul(h, const) -> Add(const)` that produces `x`, each constant per channel of
    /// `channels` (or scalar), the `Mul` read only by the `Add`.
    fn affine_producing(&self, x: &str, channels: usize) -> Option<Affine> {
        let add = self.producer(x).filter(|&a| self.node(a).is("Add"))?;
        let (shift, mul_out) =
            self.constant_operand(add).and_then(|(t, other)| Some((t.per_channel(channels)?, other)))?;
        let mul = self.producer(&mul_out).filter(|&m| self.node(m).is("Mul"))?;
        if self.sole_consumer(&mul_out) != Some(add) {
            return None;
        }
        let (scale, h) = self.constant_operand(mul).and_then(|(t, other)| Some((t.per_channel(channels)?, other)))?;
        Some(Affine { mul, add, scale, shift, input: h })
    }

    /// The weight and bias of a plain convolution: `(W, b, out_channels)`.
    fn conv_params(&self, i: usize) -> Option<(Tensor, Vec<f32>, usize)> {
        let n = self.node(i);
        if !n.is("Conv") || n.inputs.len() < 2 {
            return None;
        }
        let w = self.constants.get(&n.inputs[1])?.clone();
        if w.dims.len() != 4 {
            return None;
        }
        let cout = w.dims[0] as usize;
        let bias = match n.inputs.get(2).filter(|s| !s.is_empty()) {
            Some(b) => {
                let t = self.constants.get(b)?;
                (t.data.len() == cout).then(|| t.data.clone())?
            }
            None => vec![0.0; cout],
        };
        Some((w, bias, cout))
    }
}

/// Pattern 1: Conv -> Mul(const) [-> Add(const)].
fn fold_after_conv(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
    let mut count = 0;
    for i in 0..g.nodes.len() {
        if g.nodes[i].is_none() {
            continue;
        }
        let Some((w, bias, cout)) = g.conv_params(i) else { continue };
        let conv_out = g.node(i).outputs[0].clone();
        let Some(mul) = g.sole_consumer(&conv_out).filter(|&m| g.node(m).is("Mul")) else { continue };
        let Some(scale) = g.constant_operand(mul).and_then(|(t, _)| t.per_channel(cout)) else { continue };
        let per_out = w.data.len() / cout;
        let mut w2 = w.clone();
        for (o, chunk) in w2.data.chunks_mut(per_out).enumerate() {
            chunk.iter_mut().for_each(|v| *v *= scale[o]);
        }
        let mut b2: Vec<f32> = bias.iter().zip(&scale).map(|(b, s)| b * s).collect();
        let mut last = mul;
        let mul_out = g.node(mul).outputs[0].clone();
        if let Some(add) = g.sole_consumer(&mul_out).filter(|&a| g.node(a).is("Add")) {
            if let Some(shift) = g.constant_operand(add).and_then(|(t, _)| t.per_channel(cout)) {
                b2.iter_mut().zip(&shift).for_each(|(b, t)| *b += t);
                last = add;
            }
        }
        let final_out = g.node(last).outputs[0].clone();
        let x = g.node(i).inputs[0].clone();
        let wn = g.add_constant(i, &conv_out, w2, inserted);
        let bn = g.add_constant(i, &conv_out, Tensor { dims: vec![cout as i64], data: b2 }, inserted);
        let conv = g.nodes[i].as_mut().unwrap();
        conv.inputs = vec![x, wn, bn];
        conv.outputs[0] = final_out;
        g.nodes[mul] = None;
        if last != mul {
            g.nodes[last] = None;
        }
        count += 1;
    }
    count
}

/// Pattern 3: Mul(const) -> Add(const) -> 1x1 Conv without padding.
fn fold_before_conv(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
    let mut count = 0;
    for i in 0..g.nodes.len() {
        if g.nodes[i].is_none() {
            continue;
        }
        let Some((w, bias, cout)) = g.conv_params(i) else { continue };
        let n = g.node(i);
        let pointwise = w.dims[2] == 1 && w.dims[3] == 1;
        let no_pads = n.ints_attribute("pads").is_none_or(|p| p.iter().all(|&v| v == 0));
        let plain = n.int_attribute("group").is_none_or(|g| g == 1)
            && n.ints_attribute("dilations").is_none_or(|d| d.iter().all(|&v| v == 1))
            && n.attribute("auto_pad").is_none();
        if !(pointwise && no_pads && plain) {
            continue;
        }
        let cin = w.dims[1] as usize;
        let x = n.inputs[0].clone();
        if g.sole_consumer(&x) != Some(i) {
            continue;
        }
        let Some(Affine { mul, add, scale, shift, input: h }) = g.affine_producing(&x, cin) else { continue };
        let mut w2 = w.clone();
        let mut b2 = bias.clone();
        #[allow(clippy::needless_range_loop)] // o and c index the weights, the bias and the affine together
        for o in 0..cout {
            for c in 0..cin {
                let k = o * cin + c;
                b2[o] += w.data[k] * shift[c];
                w2.data[k] = w.data[k] * scale[c];
            }
        }
        let conv_out = g.node(i).outputs[0].clone();
        let wn = g.add_constant(i, &conv_out, w2, inserted);
        let bn = g.add_constant(i, &conv_out, Tensor { dims: vec![cout as i64], data: b2 }, inserted);
        let conv = g.nodes[i].as_mut().unwrap();
        conv.inputs = vec![h, wn, bn];
        g.nodes[mul] = None;
        g.nodes[add] = None;
        count += 1;
    }
    count
}

/// Pattern 4: Mul(const) -> Add(const) -> Conv (any other convolution, whose weights tell
/// the channel count) becomes one 1x1 depthwise Conv with weight `s` and bias `t`.
fn affine_as_depthwise(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
    let mut count = 0;
    for i in 0..g.nodes.len() {
        if g.nodes[i].is_none() {
            continue;
        }
        let Some(channels) = g.conv_input_channels(i) else { continue };
        let x = g.node(i).inputs[0].clone();
        // Every reader of the affine's output must be a convolution with the same channels,
        // so the channel count is known for all of them.
        if g.graph_outputs.contains(&x) || g.consumers(&x).iter().any(|&r| g.conv_input_channels(r) != Some(channels)) {
            continue;
        }
        let Some(Affine { mul, add, scale, shift, input: h }) = g.affine_producing(&x, channels) else { continue };
        let wn = g.add_constant(mul, &x, Tensor { dims: vec![channels as i64, 1, 1, 1], data: scale }, inserted);
        let bn = g.add_constant(mul, &x, Tensor { dims: vec![channels as i64], data: shift }, inserted);
        g.nodes[mul] = Some(Node::depthwise_1x1(&[&h, &wn, &bn], &x, channels));
        g.nodes[add] = None;
        count += 1;
    }
    count
}

/// Pattern 5: `x -> [MatMul(const W) -> Add(const b) | Identity]... -> Softmax(last axis)`
/// on a 3-D `x` (made by a 3-axis `Transpose`) runs on `x` reshaped to `[N*T, K]`, each pair
/// as `Gemm(W, b)`, and the logits are reshaped back to `[N, T, C]` for the softmax.
fn head_as_gemm(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
    let mut count = 0;
    for s in 0..g.nodes.len() {
        let Some(softmax) = g.nodes[s].as_ref() else { continue };
        if !softmax.is("Softmax") || softmax.inputs.len() != 1 || !matches!(softmax.int_attribute("axis"), Some(2)) {
            continue;
        }
        // The chain back from the softmax, last node first: each reads the one before it,
        // which nothing else reads.
        let mut chain: Vec<usize> = Vec::new();
        let mut value = softmax.inputs[0].clone();
        while let Some(p) = g.producer(&value).filter(|_| g.sole_consumer(&value).is_some()) {
            let n = g.node(p);
            let linear = n.inputs.len() == 2 && g.constants.get(&n.inputs[1]).is_some_and(|w| w.dims.len() == 2);
            let bias = n.inputs.len() == 2 && g.constants.get(&n.inputs[1]).is_some_and(|b| b.dims.len() == 1);
            if !(n.is("Identity") || (n.is("MatMul") && linear) || (n.is("Add") && bias)) {
                break;
            }
            chain.push(p);
            value = n.inputs[0].clone();
        }
        chain.reverse();
        // `value` is the head's input: 3-D for certain when a 3-axis Transpose made it.
        let three_d = g.producer(&value).is_some_and(|t| {
            g.node(t).is("Transpose") && g.node(t).ints_attribute("perm").is_some_and(|p| p.len() == 3)
        });
        let matmuls: Vec<usize> = chain.iter().copied().filter(|&i| g.node(i).is("MatMul")).collect();
        let (Some(&first), Some(&last)) = (matmuls.first(), matmuls.last()) else { continue };
        if !three_d || g.node(first).inputs[0] != value {
            continue;
        }
        // Every Add must follow a MatMul (as its bias) and have a bias of that MatMul's width.
        let mut pairs = Vec::new();
        let mut ok = true;
        for (k, &i) in chain.iter().enumerate() {
            if g.node(i).is("Add") {
                let prev = k.checked_sub(1).map(|j| chain[j]);
                let width = prev.filter(|&m| g.node(m).is("MatMul")).map(|m| g.constants[&g.node(m).inputs[1]].dims[1]);
                if width.is_none() || Some(g.constants[&g.node(i).inputs[1]].dims[0]) != width {
                    ok = false;
                    break;
                }
                pairs.push((prev.unwrap(), i));
            }
        }
        if !ok {
            continue;
        }
        let k = g.constants[&g.node(first).inputs[1]].dims[0];
        let classes = g.constants[&g.node(last).inputs[1]].dims[1];
        g.fresh += 1;
        let tag = format!("__head{}", g.fresh);
        let flat = format!("{value}{tag}_2d");
        let (flat_shape, nt_index, width) = (format!("{tag}_flat"), format!("{tag}_nt"), format!("{tag}_c"));
        inserted.push((first, Node::int64_constant(&flat_shape, &[-1, k])));
        inserted.push((first, Node::simple("Reshape", &[&value, &flat_shape], &flat, &[])));
        g.nodes[first].as_mut().unwrap().inputs[0] = flat;
        for &(m, a) in &pairs {
            let (x, w) = (g.node(m).inputs[0].clone(), g.node(m).inputs[1].clone());
            let b = g.node(a).inputs[1].clone();
            let out = g.node(a).outputs[0].clone();
            g.nodes[a] = Some(Node::simple("Gemm", &[&x, &w, &b], &out, &[]));
            g.nodes[m] = None;
            count += 1;
        }
        // The head's values are 2-D now: renamed, so shapes the file declares for the old
        // names (3-D) do not apply to them.
        for &i in &chain {
            let Some(n) = g.nodes[i].as_mut() else { continue };
            let old = n.outputs[0].clone();
            let new = format!("{old}{tag}_2d");
            n.outputs[0] = new.clone();
            for r in g.nodes.iter_mut().flatten() {
                r.inputs.iter_mut().filter(|v| **v == old).for_each(|v| *v = new.clone());
            }
        }
        // Back to [N, T, C] (N and T from the input's shape) before the softmax: reshaping an
        // intermediate value is free, reshaping the graph's output is a copy of it.
        let rows = g.node(s).inputs[0].clone();
        let (shape_in, nt, shape_out) = (format!("{tag}_shape"), format!("{tag}_nt_dims"), format!("{tag}_shape_out"));
        let logits = format!("{rows}{tag}_3d");
        inserted.push((s, Node::simple("Shape", &[&value], &shape_in, &[])));
        inserted.push((s, Node::int64_constant(&nt_index, &[0, 1])));
        inserted.push((s, Node::with_int("Gather", &[&shape_in, &nt_index], &nt, "axis", 0)));
        inserted.push((s, Node::int64_constant(&width, &[classes])));
        inserted.push((s, Node::with_int("Concat", &[&nt, &width], &shape_out, "axis", 0)));
        inserted.push((s, Node::simple("Reshape", &[&rows, &shape_out], &logits, &[])));
        g.nodes[s].as_mut().unwrap().inputs[0] = logits;
    }
    count
}

/// Pattern 2: Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6) -> Mul(x, HardSigmoid(x)).
fn rewrite_hardswish(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
    let near = |v: Option<f32>, want: f32| v.is_some_and(|v| (v - want).abs() < 1e-6);
    let mut count = 0;
    for i in 0..g.nodes.len() {
        let Some(div) = g.nodes[i].as_ref() else { continue };
        if !div.is("Div")
            || div.inputs.len() != 2
            || !near(g.constants.get(&div.inputs[1]).and_then(Tensor::scalar), 6.0)
        {
            continue;
        }
        let y = div.outputs[0].clone();
        let Some(mul) = g.producer(&div.inputs[0]).filter(|&m| g.node(m).is("Mul")) else { continue };
        let found = g.node(mul).inputs.iter().enumerate().find_map(|(k, clip_out)| {
            let clip = g.producer(clip_out).filter(|&c| g.node(c).is("Clip"))?;
            let c = g.node(clip);
            let bound = |attr: &str, input: usize| {
                c.float_attribute(attr)
                    .or_else(|| c.inputs.get(input).and_then(|n| g.constants.get(n)).and_then(Tensor::scalar))
            };
            if !near(bound("min", 1), 0.0) || !near(bound("max", 2), 6.0) {
                return None;
            }
            let add = g.producer(&c.inputs[0]).filter(|&a| g.node(a).is("Add"))?;
            let (three, x) = g.constant_operand(add)?;
            let other = &g.node(mul).inputs[1 - k];
            (near(three.scalar(), 3.0) && *other == x).then_some(x)
        });
        let Some(x) = found else { continue };
        let hs = format!("{y}__hardsigmoid");
        inserted.push((i, Node::simple("HardSigmoid", &[&x], &hs, &[("alpha", 1.0 / 6.0), ("beta", 0.5)])));
        g.nodes[i] = Some(Node::simple("Mul", &[&x, &hs], &y, &[]));
        count += 1;
    }
    count
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

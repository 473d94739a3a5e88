//! The ONNX graph as the rewrites edit it: nodes, constants by name, and the protobuf
//! field numbers of onnx.proto they are read and written with.

use std::collections::{HashMap, HashSet};

use super::proto::{self, encode, parse, varints, Field, Value};

// ONNX field numbers (onnx.proto).
pub(super) const MODEL_GRAPH: u32 = 7;
pub(super) const GRAPH_NODE: u32 = 1;
pub(super) const GRAPH_INITIALIZER: u32 = 5;
pub(super) const GRAPH_OUTPUT: u32 = 12;
pub(super) const NODE_INPUT: u32 = 1;
pub(super) const NODE_OUTPUT: u32 = 2;
pub(super) const NODE_OP_TYPE: u32 = 4;
pub(super) const NODE_ATTRIBUTE: u32 = 5;
pub(super) const NODE_DOMAIN: u32 = 7;
pub(super) const ATTR_NAME: u32 = 1;
pub(super) const ATTR_F: u32 = 2;
pub(super) const ATTR_I: u32 = 3;
pub(super) const ATTR_T: u32 = 5;
pub(super) const ATTR_INTS: u32 = 8;
pub(super) const ATTR_TYPE: u32 = 20;
pub(super) const ATTR_TYPE_FLOAT: u64 = 1;
pub(super) const ATTR_TYPE_INT: u64 = 2;
pub(super) const ATTR_TYPE_TENSOR: u64 = 4;
pub(super) const TENSOR_DIMS: u32 = 1;
pub(super) const TENSOR_DATA_TYPE: u32 = 2;
pub(super) const TENSOR_FLOAT_DATA: u32 = 4;
pub(super) const TENSOR_NAME: u32 = 8;
pub(super) const TENSOR_RAW_DATA: u32 = 9;
pub(super) const TENSOR_FLOAT: u64 = 1;
pub(super) const TENSOR_INT64: u64 = 7;
pub(super) const VALUE_INFO_NAME: u32 = 1;

/// A float tensor.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Tensor {
    pub(super) dims: Vec<i64>,
    pub(super) data: Vec<f32>,
}

impl Tensor {
    /// Reads a `TensorProto` holding floats; `None` for other types or external data.
    pub(super) fn decode(bytes: &[u8]) -> Option<Self> {
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

    pub(super) fn encode(&self, name: &str) -> Vec<u8> {
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
    pub(super) fn per_channel(&self, channels: usize) -> Option<Vec<f32>> {
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

    pub(super) fn scalar(&self) -> Option<f32> {
        (self.data.len() == 1).then(|| self.data[0])
    }
}

/// A node: the fields this pass reads, plus everything else kept as it was.
#[derive(Clone, Debug)]
pub(super) struct Node {
    pub(super) inputs: Vec<String>,
    pub(super) outputs: Vec<String>,
    pub(super) op: String,
    pub(super) domain: String,
    pub(super) attributes: Vec<Vec<Field>>,
    pub(super) other: Vec<Field>,
}

impl Node {
    pub(super) fn decode(bytes: &[u8]) -> Result<Self, String> {
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

    pub(super) fn encode(&self) -> Vec<u8> {
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

    pub(super) fn is(&self, op: &str) -> bool {
        self.op == op && (self.domain.is_empty() || self.domain == "ai.onnx")
    }

    pub(super) fn attribute(&self, name: &str) -> Option<&[Field]> {
        self.attributes
            .iter()
            .find(|a| a.iter().any(|f| f.number == ATTR_NAME && f.as_str() == Some(name)))
            .map(Vec::as_slice)
    }

    pub(super) fn float_attribute(&self, name: &str) -> Option<f32> {
        self.attribute(name)?.iter().find(|f| f.number == ATTR_F).and_then(|f| match f.value {
            Value::Fixed32(v) => Some(f32::from_bits(v)),
            _ => None,
        })
    }

    pub(super) fn int_attribute(&self, name: &str) -> Option<i64> {
        self.attribute(name)?.iter().find(|f| f.number == ATTR_I).and_then(|f| match f.value {
            Value::Varint(v) => Some(v as i64),
            _ => None,
        })
    }

    pub(super) fn ints_attribute(&self, name: &str) -> Option<Vec<i64>> {
        self.attribute(name).and_then(|a| varints(a, ATTR_INTS).ok())
    }

    pub(super) fn constant(name: &str, t: &Tensor) -> Self {
        Node::constant_of(name, t.encode(name))
    }

    /// A `Constant` node whose value is the encoded `TensorProto` `tensor`.
    pub(super) fn constant_of(name: &str, tensor: Vec<u8>) -> Self {
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
    pub(super) fn depthwise_1x1(inputs: &[&str], output: &str, channels: usize) -> Self {
        Node::with_int("Conv", inputs, output, "group", channels as i64)
    }

    /// A constant 1-D int64 tensor (shapes and indices).
    pub(super) fn int64_constant(name: &str, values: &[i64]) -> Self {
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
    pub(super) fn with_int(op: &str, inputs: &[&str], output: &str, name: &str, value: i64) -> Self {
        let attribute = vec![
            Field::string(ATTR_NAME, name),
            Field::varint(ATTR_I, value as u64),
            Field::varint(ATTR_TYPE, ATTR_TYPE_INT),
        ];
        Node { attributes: vec![attribute], ..Node::simple(op, inputs, output, &[]) }
    }

    pub(super) fn simple(op: &str, inputs: &[&str], output: &str, float_attributes: &[(&str, f32)]) -> Self {
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
pub(super) struct Affine {
    pub(super) mul: usize,
    pub(super) add: usize,
    pub(super) scale: Vec<f32>,
    pub(super) shift: Vec<f32>,
    pub(super) input: String,
}

/// The graph being edited: nodes (`None` once removed), constants by name.
pub(super) struct Graph {
    pub(super) nodes: Vec<Option<Node>>,
    pub(super) constants: HashMap<String, Tensor>,
    pub(super) graph_outputs: HashSet<String>,
    pub(super) fresh: usize,
}

impl Graph {
    pub(super) fn consumers(&self, name: &str) -> Vec<usize> {
        self.nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.as_ref().is_some_and(|n| n.inputs.iter().any(|i| i == name)))
            .map(|(i, _)| i)
            .collect()
    }

    /// The node that is the only user of `name` (and `name` is not a graph output).
    pub(super) fn sole_consumer(&self, name: &str) -> Option<usize> {
        if self.graph_outputs.contains(name) {
            return None;
        }
        match self.consumers(name).as_slice() {
            [one] => Some(*one),
            _ => None,
        }
    }

    pub(super) fn producer(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.as_ref().is_some_and(|n| n.outputs.iter().any(|o| o == name)))
    }

    pub(super) fn node(&self, i: usize) -> &Node {
        self.nodes[i].as_ref().expect("live node")
    }

    /// For a binary node with one constant input: (the constant, the other input).
    pub(super) fn constant_operand(&self, i: usize) -> Option<(&Tensor, String)> {
        let n = self.node(i);
        let [a, b] = n.inputs.as_slice() else { return None };
        match (self.constants.get(a), self.constants.get(b)) {
            (Some(t), None) => Some((t, b.clone())),
            (None, Some(t)) => Some((t, a.clone())),
            _ => None,
        }
    }

    /// Adds a constant node before node `at`'s position; returns its name.
    pub(super) fn add_constant(
        &mut self,
        at: usize,
        base: &str,
        t: Tensor,
        inserted: &mut Vec<(usize, Node)>,
    ) -> String {
        self.fresh += 1;
        let name = format!("{base}__fused{}", self.fresh);
        inserted.push((at, Node::constant(&name, &t)));
        self.constants.insert(name.clone(), t);
        name
    }

    /// Input channels of convolution `i` (weight `[O, I/groups, kh, kw]`).
    pub(super) fn conv_input_channels(&self, i: usize) -> Option<usize> {
        let (w, _, _) = self.conv_params(i)?;
        let groups = self.node(i).int_attribute("group").unwrap_or(1).max(1) as usize;
        Some(w.dims[1] as usize * groups)
    }

    /// The `Mul(h, const) -> Add(const)` that produces `x`, each constant per channel of
    /// `channels` (or scalar), the `Mul` read only by the `Add`.
    pub(super) fn affine_producing(&self, x: &str, channels: usize) -> Option<Affine> {
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
    pub(super) fn conv_params(&self, i: usize) -> Option<(Tensor, Vec<f32>, usize)> {
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

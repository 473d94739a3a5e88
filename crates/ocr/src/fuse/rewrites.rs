//! The rewrites of [`super::optimise`], one function per pattern of the module's list: each
//! edits the graph in place, queues the nodes it adds in `inserted` and returns how many
//! times it applied.

use super::graph::{Affine, Graph, Node, Tensor};

/// Pattern 1: Conv -> Mul(const) [-> Add(const)].
pub(super) fn fold_after_conv(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
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
pub(super) fn fold_before_conv(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
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
pub(super) fn affine_as_depthwise(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
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
pub(super) fn head_as_gemm(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
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
pub(super) fn rewrite_hardswish(g: &mut Graph, inserted: &mut Vec<(usize, Node)>) -> usize {
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

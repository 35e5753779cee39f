//! The argument generator of the every-op fuzz target (tests/tests/fuzz_ops.rs): for
//! each public function of `gpukit-ops`, random and lying arguments built on one kit
//! from a case seed, so every kit gets the same case.

use gpukit::abi::conv::{ConvTranspose2dParams, GemmC, GemmParams, MaxPool2dParams};
use gpukit::ops::{
    self, AttentionShape, AxisSlice, AxisSlot, BatchNorm, BinaryOp, Conv2dParams, LayerNorm, MapFn,
    Resize2d, UnaryOp,
};
use gpukit::prelude::*;

use super::{Guarded, MAX_FIT, Rng};

/// Every public function of `gpukit-ops`, in the order the cases visit them.
pub const OPS: [&str; 73] = [
    "softmax_rows",
    "sum",
    "dot",
    "gather",
    "scatter",
    "attention_supported",
    "attention_default_scale",
    "attention",
    "attention_masked",
    "attention_batch",
    "attention_composed",
    "copy_into_axis",
    "concat",
    "slice",
    "permute",
    "as_strided",
    "expand",
    "expand_last",
    "resize_bilinear",
    "resize_nearest",
    "eos_gather",
    "binary",
    "add",
    "sub",
    "mul",
    "div",
    "pow",
    "binary_broadcast",
    "unary",
    "map",
    "matmul",
    "bmm",
    "gemm",
    "conv2d_out_shape",
    "conv2d",
    "conv_transpose2d_out_shape",
    "conv_transpose2d",
    "max_pool2d_out_shape",
    "max_pool2d",
    "max_pool2d_index",
    "numel",
    "batch_norm",
    "layer_norm",
    "leaky_relu",
    "clip",
    "erf",
    "gelu",
    "gelu_tanh",
    "softmax_axis",
    "argmax",
    "reduce_l2",
    // The cast group.
    "cast",
    "reduce_axes",
    "reduce_out_dims",
    // The comparison, where and logical group.
    "compare",
    "where_",
    "logical",
    "logical_not",
    // The norm_ext block.
    "layer_norm_ex",
    "group_norm",
    "rms_norm",
    // The GEMM family's model-author forms.
    "linear",
    "linear_out_dims",
    "matmul_broadcast",
    "matmul_broadcast_dims",
    // The general resize.
    "resize",
    "resize_out_dims",
    // The element-wise index group (ONNX GatherElements / ScatterElements).
    "gather_elements",
    "scatter_elements",
    "pad",
    "pad_out_dims",
    "cumsum",
    "topk",
];

/// The checked product of `dims`, if it is a buffer length the case may allocate.
fn fit(dims: &[usize]) -> Option<usize> {
    dims.iter()
        .try_fold(1usize, |p, &d| p.checked_mul(d))
        .filter(|&n| n <= MAX_FIT)
}

/// One case's arguments, generated on one kit from the case's own seed: the same seed
/// gives the same arguments (and contents) on every kit.
pub struct Case<'k> {
    k: &'k Kit,
    r: Rng,
    /// The buffers the op was given (their guards are checked after the call).
    pub bufs: Vec<Guarded>,
    /// The generated arguments, for a failure message.
    pub desc: String,
    /// A tame case: small true dims, fitting buffers of one float dtype, no aliasing,
    /// plausible parameters (half the cases), so every op also gets past validation
    /// and runs; the other half lie freely.
    tame: bool,
}

impl<'k> Case<'k> {
    /// A case on kit `k` from `case_seed` (the same seed gives the same arguments on
    /// every kit).
    pub fn new(k: &'k Kit, case_seed: u64) -> Case<'k> {
        let mut r = Rng::new(case_seed);
        let tame = r.one_in(2);
        Case {
            k,
            r,
            bufs: Vec::new(),
            desc: if tame { "tame ".into() } else { String::new() },
            tame,
        }
    }

    /// Notes a generated value in the case's description.
    fn note(&mut self, what: &str, v: impl std::fmt::Debug) {
        self.desc += &format!("{what}={v:?} ");
    }

    fn dim(&mut self, what: &str) -> usize {
        let d = if self.tame {
            1 + self.r.below(5) as usize
        } else {
            self.r.dim()
        };
        self.note(what, d);
        d
    }

    fn dims(&mut self, what: &str, max_rank: u64) -> Vec<usize> {
        let rank = self.r.below(max_rank + 1) as usize;
        let tame = self.tame;
        let v: Vec<usize> = (0..rank)
            .map(|_| {
                if tame {
                    1 + self.r.below(4) as usize
                } else {
                    self.r.dim()
                }
            })
            .collect();
        self.note(what, &v);
        v
    }

    fn param(&mut self, what: &str) -> f64 {
        let p = if self.tame {
            self.r.below(100) as f64 / 64.0
        } else {
            self.r.param()
        };
        self.note(what, p);
        p
    }

    /// A length: the fitting one (`fit` of the dims) most of the time, else random.
    fn len(&mut self, fitting: Option<usize>) -> usize {
        match fitting {
            Some(n) if self.tame || !self.r.one_in(4) => n,
            _ => self.r.below(48) as usize,
        }
    }

    /// A new guarded buffer of `dtype` (sometimes another dtype), `fitting` elements
    /// most of the time; returns its index.
    fn buf(&mut self, what: &str, dtype: DType, fitting: Option<usize>) -> usize {
        let dtype = if !self.tame && self.r.one_in(20) {
            self.r.dtype()
        } else {
            dtype
        };
        let n = self.len(fitting);
        let bytes = self.r.contents(dtype, n);
        self.note(what, (dtype, n));
        self.bufs.push(Guarded::new(self.k, dtype, n, &bytes));
        self.bufs.len() - 1
    }

    /// An input: a new buffer, or sometimes the output `out` itself (aliasing).
    fn input(&mut self, what: &str, dtype: DType, fitting: Option<usize>, out: usize) -> usize {
        if !self.tame && self.r.one_in(10) {
            self.note(what, "= out");
            out
        } else {
            self.buf(what, dtype, fitting)
        }
    }

    /// An i64 index buffer (sometimes another dtype) for an axis of `axis_len`.
    fn index_buf(&mut self, what: &str, fitting: Option<usize>, axis_len: usize) -> usize {
        let dtype = if !self.tame && self.r.one_in(20) {
            self.r.dtype()
        } else {
            DType::I64
        };
        let n = self.len(fitting);
        let bytes = if dtype == DType::I64 {
            self.r.indices(n, axis_len)
        } else {
            self.r.contents(dtype, n)
        };
        self.note(what, (dtype, n));
        self.bufs.push(Guarded::new(self.k, dtype, n, &bytes));
        self.bufs.len() - 1
    }

    fn v(&self, i: usize) -> &Buf {
        &self.bufs[i].view
    }

    /// An attention shape: a supported head_dim most of the time.
    fn attention_shape(&mut self) -> AttentionShape {
        let heads = self.dim("heads");
        let n = self.dim("n");
        let nkv = self.dim("nkv");
        let hd = if self.tame {
            *self.r.pick(&[1usize, 2, 4, 8, 16, 3])
        } else {
            *self.r.pick(&[1usize, 2, 4, 8, 16, 3, 0, 257, 1 << 40])
        };
        let mut s = AttentionShape::new(heads, n, nkv, hd);
        if !self.tame && self.r.one_in(4) {
            s = s.with_scale(self.r.param());
        }
        self.note("shape", s);
        s
    }
}

/// A user map (x·x + 1, the same operations in both forms).
fn square_plus_one() -> MapFn {
    MapFn {
        name: "fuzz_sq1".into(),
        cuda_expr: "x * x + 1".into(),
        f32: |x| x * x + 1.0,
        f64: |x| x * x + 1.0,
    }
}

/// Calls op `op` (one of [`OPS`]) with arguments generated by `c`; returns the op's
/// result (a pure function's `Ok` value dropped).
///
/// Panics for a name outside [`OPS`].
pub fn call(op: &str, c: &mut Case<'_>) -> Result<()> {
    let d = if c.tame {
        *c.r.pick(&[DType::F32, DType::F64, DType::F16, DType::BF16])
    } else {
        c.r.dtype()
    };
    c.note("dtype", d);
    let k = c.k;
    match op {
        "softmax_rows" => {
            let (rows, cols) = (c.dim("rows"), c.dim("cols"));
            let o = c.buf("out", d, fit(&[rows, cols]));
            let a = c.input("a", d, fit(&[rows, cols]), o);
            ops::softmax_rows(k, c.v(o), c.v(a), rows, cols)
        }
        "sum" => {
            let n = c.dim("n");
            let o = c.buf("out", d, Some(1));
            let a = c.buf("a", d, fit(&[n]));
            ops::sum(k, c.v(o), c.v(a))
        }
        "dot" => {
            let n = c.dim("n");
            let o = c.buf("out", d, Some(1));
            let a = c.buf("a", d, fit(&[n]));
            let b = c.buf("b", d, fit(&[n]));
            ops::dot(k, c.v(o), c.v(a), c.v(b))
        }
        "gather" => {
            let (outer, axis, inner, nidx) =
                (c.dim("outer"), c.dim("axis"), c.dim("inner"), c.dim("nidx"));
            let o = c.buf("out", d, fit(&[outer, nidx, inner]));
            let x = c.input("data", d, fit(&[outer, axis, inner]), o);
            let i = c.index_buf("idx", fit(&[nidx]), axis);
            ops::gather(k, c.v(o), c.v(x), c.v(i), outer, axis, inner)
        }
        "scatter" => {
            let (outer, axis, inner, nidx) =
                (c.dim("outer"), c.dim("axis"), c.dim("inner"), c.dim("nidx"));
            let y = c.buf("y", d, fit(&[outer, axis, inner]));
            let x = c.input("data", d, fit(&[outer, axis, inner]), y);
            let i = c.index_buf("idx", fit(&[nidx]), axis);
            let u = c.input("upd", d, fit(&[outer, nidx, inner]), y);
            ops::scatter(k, c.v(y), c.v(x), c.v(i), c.v(u), outer, axis, inner)
        }
        "attention_supported" => {
            let hd = c.dim("head_dim");
            let _ = ops::attention_supported(hd);
            Ok(())
        }
        "attention_default_scale" => {
            let hd = c.dim("head_dim");
            let _ = ops::attention_default_scale(hd);
            Ok(())
        }
        "attention" | "attention_masked" | "attention_batch" | "attention_composed" => {
            let s = c.attention_shape();
            let batch = if op == "attention_batch" {
                c.dim("batch")
            } else {
                1
            };
            let hpm = if c.tame {
                1
            } else {
                *c.r.pick(&[1usize, 1, 2, 0, 3, 1 << 40])
            };
            c.note("heads_per_mask_row", hpm);
            let (nq, nk) = (
                fit(&[batch, s.heads, s.n, s.head_dim]),
                fit(&[batch, s.heads, s.nkv, s.head_dim]),
            );
            let o = c.buf("out", d, nq);
            let q = c.input("q", d, nq, o);
            let kk = c.input("k", d, nk, o);
            let v = c.input("v", d, nk, o);
            let mask_len = if op == "attention_batch" {
                fit(&[batch, s.nkv])
            } else {
                fit(&[s.heads / hpm.max(1), s.nkv])
            };
            let absent_mask = op != "attention_masked" && c.r.one_in(2);
            let m = (!absent_mask).then(|| c.buf("mask", d, mask_len));
            let mask = m.map_or_else(|| Buf::absent(d), |m| c.v(m).clone());
            match op {
                "attention" => ops::attention(k, c.v(o), c.v(q), c.v(kk), c.v(v), s),
                "attention_masked" => {
                    ops::attention_masked(k, c.v(o), c.v(q), c.v(kk), c.v(v), &mask, hpm, s)
                }
                "attention_batch" => {
                    ops::attention_batch(k, c.v(o), c.v(q), c.v(kk), c.v(v), &mask, batch, s)
                }
                _ => {
                    let sc = c.buf("scores", d, fit(&[s.heads, s.n, s.nkv]));
                    ops::attention_composed(
                        k,
                        c.v(o),
                        c.v(sc),
                        c.v(q),
                        c.v(kk),
                        c.v(v),
                        &mask,
                        hpm,
                        s,
                    )
                }
            }
        }
        "copy_into_axis" => {
            let slot = AxisSlot {
                outer: c.dim("outer"),
                src_axis: c.dim("src_axis"),
                inner: c.dim("inner"),
                dst_axis: c.dim("dst_axis"),
                offset: c.dim("offset"),
            };
            let dst = c.buf("dst", d, fit(&[slot.outer, slot.dst_axis, slot.inner]));
            let src = c.input("src", d, fit(&[slot.outer, slot.src_axis, slot.inner]), dst);
            ops::copy_into_axis(k, c.v(dst), c.v(src), slot)
        }
        "concat" => {
            let (outer, inner) = (c.dim("outer"), c.dim("inner"));
            let lens = c.dims("axis_lens", 4);
            let total = lens.iter().try_fold(0usize, |a, &l| a.checked_add(l));
            let o = c.buf("out", d, total.and_then(|t| fit(&[outer, t, inner])));
            let inputs: Vec<usize> = (0..lens.len() + c.r.below(2) as usize)
                .map(|i| {
                    let l = lens.get(i).copied().unwrap_or(1);
                    c.input("input", d, fit(&[outer, l, inner]), o)
                })
                .collect();
            let refs: Vec<&Buf> = inputs.iter().map(|&i| c.v(i)).collect();
            ops::concat(k, c.v(o), &refs, outer, &lens, inner)
        }
        "slice" => {
            let start = match c.r.below(6) {
                0 if !c.tame => *c.r.pick(&[i64::MIN, i64::MAX, -1, -(1 << 40)]),
                _ => c.r.below(9) as i64 - 4,
            };
            let s = AxisSlice {
                outer: c.dim("outer"),
                axis_len: c.dim("axis_len"),
                inner: c.dim("inner"),
                start,
                len: c.dim("len"),
                step: c.dim("step"),
            };
            c.note("start", start);
            let o = c.buf("out", d, fit(&[s.outer, s.len, s.inner]));
            let x = c.input("x", d, fit(&[s.outer, s.axis_len, s.inner]), o);
            ops::slice(k, c.v(o), c.v(x), s)
        }
        "permute" => {
            let dims = c.dims("in_dims", 5);
            let mut perm: Vec<usize> = (0..dims.len()).collect();
            for i in (1..perm.len()).rev() {
                let j = c.r.below(i as u64 + 1) as usize;
                perm.swap(i, j);
            }
            if !c.tame && c.r.one_in(6) && !perm.is_empty() {
                // A lying permutation: a repeat or an axis past the rank.
                let at = c.r.below(perm.len() as u64) as usize;
                perm[at] = c.r.below(perm.len() as u64 + 2) as usize;
            } else if !c.tame && c.r.one_in(10) {
                perm.push(perm.len());
            }
            c.note("perm", &perm);
            let o = c.buf("out", d, fit(&dims));
            let x = c.input("x", d, fit(&dims), o);
            ops::permute(k, c.v(o), c.v(x), &dims, &perm)
        }
        "as_strided" => {
            let dims = c.dims("dims", 5);
            let mut strides: Vec<usize> = dims.iter().map(|_| c.r.below(7) as usize).collect();
            if !c.tame && c.r.one_in(6) {
                // Lying strides: one huge, or one entry too many.
                if let Some(s0) = strides.first_mut() {
                    *s0 = *c.r.pick(&[1usize << 40, usize::MAX / 2, usize::MAX]);
                } else {
                    strides.push(1);
                }
            }
            let offset = if c.tame {
                c.r.below(4) as usize
            } else {
                c.r.below(64) as usize
            };
            c.note("strides", &strides);
            c.note("offset", offset);
            // The input x needs: offset + Σ (d - 1)·s + 1 elements.
            let need = dims
                .iter()
                .zip(&strides)
                .try_fold(offset, |a, (&d, &s)| {
                    d.checked_sub(1)?.checked_mul(s)?.checked_add(a)
                })
                .and_then(|l| l.checked_add(1))
                .filter(|&n| n <= MAX_FIT);
            let o = c.buf("out", d, fit(&dims));
            let x = c.input("x", d, need, o);
            ops::as_strided(k, c.v(o), c.v(x), &dims, &strides, offset)
        }
        "expand" => {
            let out_dims = c.dims("out_dims", 5);
            let mut in_dims: Vec<usize> = out_dims
                .iter()
                .map(|&e| if c.r.one_in(2) { 1 } else { e })
                .collect();
            if c.r.one_in(3) && !in_dims.is_empty() {
                in_dims.remove(0);
            }
            if !c.tame && c.r.one_in(6) {
                in_dims.push(c.r.dim());
            }
            c.note("in_dims", &in_dims);
            let o = c.buf("out", d, fit(&out_dims));
            let x = c.input("x", d, fit(&in_dims), o);
            ops::expand(k, c.v(o), c.v(x), &in_dims, &out_dims)
        }
        "expand_last" => {
            let (rows, n) = (c.dim("rows"), c.dim("n"));
            let o = c.buf("out", d, fit(&[rows, n]));
            let x = c.input("x", d, fit(&[rows]), o);
            ops::expand_last(k, c.v(o), c.v(x), rows, n)
        }
        "resize_bilinear" | "resize_nearest" => {
            let r = Resize2d {
                n: c.dim("n"),
                c: c.dim("c"),
                in_h: c.dim("in_h"),
                in_w: c.dim("in_w"),
                out_h: c.dim("out_h"),
                out_w: c.dim("out_w"),
            };
            let o = c.buf("out", d, fit(&[r.n, r.c, r.out_h, r.out_w]));
            let x = c.input("x", d, fit(&[r.n, r.c, r.in_h, r.in_w]), o);
            if op == "resize_nearest" {
                ops::resize_nearest(k, c.v(o), c.v(x), r)
            } else {
                let align = c.r.one_in(2);
                ops::resize_bilinear(k, c.v(o), c.v(x), r, align)
            }
        }
        "eos_gather" => {
            let (batch, seq, dd) = (c.dim("batch"), c.dim("seq"), c.dim("d"));
            let o = c.buf("out", d, fit(&[batch, dd]));
            let x = c.input("x", d, fit(&[batch, seq, dd]), o);
            let ids = c.index_buf("ids", fit(&[batch, seq]), seq);
            ops::eos_gather(k, c.v(o), c.v(x), c.v(ids), batch, seq, dd)
        }
        "binary" | "add" | "sub" | "mul" | "div" | "pow" => {
            let n = c.dim("n");
            let o = c.buf("out", d, fit(&[n]));
            let a = c.input("a", d, fit(&[n]), o);
            let b = c.input("b", d, fit(&[n]), o);
            let bop = *c.r.pick(&BinaryOp::ALL);
            let (o, a, b) = (c.v(o), c.v(a), c.v(b));
            match op {
                "add" => ops::add(k, o, a, b),
                "sub" => ops::sub(k, o, a, b),
                "mul" => ops::mul(k, o, a, b),
                "div" => ops::div(k, o, a, b),
                "pow" => ops::pow(k, o, a, b),
                _ => ops::binary(k, bop, o, a, b),
            }
        }
        "binary_broadcast" => {
            let out_dims = c.dims("out_dims", 4);
            let strides = |c: &mut Case<'_>, what: &str| -> Vec<usize> {
                // Contiguous strides of the dims, with broadcast (0) axes and lies.
                let mut s = vec![0usize; out_dims.len()];
                let mut acc = 1usize;
                for i in (0..out_dims.len()).rev() {
                    let bcast = c.r.one_in(3);
                    s[i] = if bcast { 0 } else { acc };
                    if !bcast {
                        acc = acc.saturating_mul(out_dims[i]);
                    }
                }
                if !c.tame && c.r.one_in(6) && !s.is_empty() {
                    let at = c.r.below(s.len() as u64) as usize;
                    s[at] = c.r.dim();
                }
                if !c.tame && c.r.one_in(10) {
                    s.push(1);
                }
                c.note(what, &s);
                s
            };
            let sa = strides(c, "a_strides");
            let sb = strides(c, "b_strides");
            let reach = |s: &[usize]| -> Option<usize> {
                out_dims.iter().zip(s).try_fold(1usize, |acc, (&d, &st)| {
                    d.checked_sub(1)?.checked_mul(st)?.checked_add(acc)
                })
            };
            let o = c.buf("out", d, fit(&out_dims));
            let (ra, rb) = (
                reach(&sa).filter(|&n| n <= MAX_FIT),
                reach(&sb).filter(|&n| n <= MAX_FIT),
            );
            let a = c.input("a", d, ra, o);
            let b = c.input("b", d, rb, o);
            let bop = *c.r.pick(&BinaryOp::ALL);
            ops::binary_broadcast(k, bop, c.v(o), &out_dims, c.v(a), &sa, c.v(b), &sb)
        }
        "unary" | "map" | "erf" | "gelu" | "gelu_tanh" | "leaky_relu" | "clip" => {
            let n = c.dim("n");
            let o = c.buf("out", d, fit(&[n]));
            let a = c.input("a", d, fit(&[n]), o);
            match op {
                "unary" => {
                    // Every map; the one-map wrappers (`ops::relu`, ..., `ops::softplus`)
                    // are exactly `unary` with their `UnaryOp`.
                    let u = *c.r.pick(&UnaryOp::ALL);
                    c.note("op", u);
                    ops::unary(k, u, c.v(o), c.v(a))
                }
                "map" => ops::map(k, &square_plus_one(), c.v(o), c.v(a)),
                "erf" => ops::erf(k, c.v(o), c.v(a)),
                "gelu" => ops::gelu(k, c.v(o), c.v(a)),
                "gelu_tanh" => ops::gelu_tanh(k, c.v(o), c.v(a)),
                "leaky_relu" => {
                    let alpha = c.param("alpha");
                    ops::leaky_relu(k, c.v(o), c.v(a), alpha)
                }
                _ => {
                    let (lo, hi) = (c.param("lo"), c.param("hi"));
                    ops::clip(k, c.v(o), c.v(a), lo, hi)
                }
            }
        }
        "matmul" => {
            let (m, kk, n) = (c.dim("m"), c.dim("k"), c.dim("n"));
            let o = c.buf("c", d, fit(&[m, n]));
            let a = c.input("a", d, fit(&[m, kk]), o);
            let b = c.input("b", d, fit(&[kk, n]), o);
            ops::matmul(k, c.v(o), c.v(a), c.v(b), m, kk, n)
        }
        "bmm" => {
            let (batch, m, kk, n) = (c.dim("batch"), c.dim("m"), c.dim("k"), c.dim("n"));
            let (ea, eb) = (fit(&[m, kk]), fit(&[kk, n]));
            // Strides: packed, broadcast (0) or a lie.
            let stride = |c: &mut Case<'_>, each: Option<usize>, what: &str| {
                let s = match c.r.below(4) {
                    0 => 0,
                    1 if !c.tame => c.r.dim(),
                    _ => each.unwrap_or(1),
                };
                c.note(what, s);
                s
            };
            let (sa, sb) = (stride(c, ea, "a_bstride"), stride(c, eb, "b_bstride"));
            let span = |each: Option<usize>, s: usize| {
                each.and_then(|e| {
                    batch
                        .checked_sub(1)
                        .map_or(Some(0), |b| b.checked_mul(s))?
                        .checked_add(e)
                })
                .filter(|&n| n <= MAX_FIT)
            };
            let o = c.buf("c", d, fit(&[batch, m, n]));
            let a = c.input("a", d, span(ea, sa), o);
            let b = c.input("b", d, span(eb, sb), o);
            ops::bmm(k, c.v(o), c.v(a), c.v(b), batch, m, kk, n, sa, sb)
        }
        "gemm" => {
            let mut p = GemmParams::new(c.dim("m"), c.dim("k"), c.dim("n"));
            p.alpha = c.param("alpha");
            p.beta = c.param("beta");
            p.trans_b = c.r.one_in(2);
            p.trans_a = c.r.one_in(2);
            p.c_layout =
                *c.r.pick(&[GemmC::Full, GemmC::Row, GemmC::Column, GemmC::Scalar]);
            c.note("c_layout", p.c_layout);
            let c_fit = p.c_layout.len(p.m, p.n).filter(|&n| n <= MAX_FIT);
            let y = c.buf("y", d, fit(&[p.m, p.n]));
            let a = c.input("a", d, fit(&[p.m, p.k]), y);
            let b = c.input("b", d, fit(&[p.k, p.n]), y);
            let cm = (!c.r.one_in(2)).then(|| c.input("c", d, c_fit, y));
            let bias = (!c.r.one_in(2)).then(|| c.input("bias", d, fit(&[p.n]), y));
            let (cm, bias) = (cm.map(|i| c.v(i)), bias.map(|i| c.v(i)));
            ops::gemm(k, c.v(y), c.v(a), c.v(b), cm, bias, &p)
        }
        "conv2d_out_shape" | "conv2d" | "conv_transpose2d_out_shape" | "conv_transpose2d" => {
            let small = |c: &mut Case<'_>, what: &str| {
                let v = if !c.tame && c.r.one_in(8) {
                    c.r.dim()
                } else {
                    1 + c.r.below(3) as usize
                };
                c.note(what, v);
                v
            };
            let (n, c_in, h, w) = (c.dim("n"), c.dim("c_in"), c.dim("h"), c.dim("w"));
            let (c_out, kh, kw) = (c.dim("c_out"), small(c, "kh"), small(c, "kw"));
            let pads = [
                small(c, "p0").saturating_sub(1),
                small(c, "p1").saturating_sub(1),
                small(c, "p2").saturating_sub(1),
                small(c, "p3").saturating_sub(1),
            ];
            let strides = [small(c, "sh"), small(c, "sw")];
            let dilations = [small(c, "dh"), small(c, "dw")];
            let groups = if c.tame {
                1
            } else {
                *c.r.pick(&[1usize, 1, 1, 2, 3, 0, 1 << 40])
            };
            let bias_wanted = c.r.one_in(2);
            c.note("groups", groups);
            if op.starts_with("conv2d") {
                let p = Conv2dParams {
                    n,
                    c_in,
                    h,
                    w,
                    c_out,
                    kh,
                    kw,
                    pads,
                    strides,
                    dilations,
                    groups,
                };
                let shape = ops::conv2d_out_shape(&p);
                if op == "conv2d_out_shape" {
                    return shape.map(|_| ());
                }
                let y = c.buf("y", d, shape.ok().and_then(|s| fit(&s)));
                let x = c.input("x", d, fit(&[n, c_in, h, w]), y);
                let wt = c.input("w", d, fit(&[c_out, c_in / groups.max(1), kh, kw]), y);
                let bias = bias_wanted.then(|| c.input("bias", d, fit(&[c_out]), y));
                ops::conv2d(k, c.v(y), c.v(x), c.v(wt), bias.map(|i| c.v(i)), &p)
            } else {
                let output_padding = [
                    small(c, "op_h").saturating_sub(1),
                    small(c, "op_w").saturating_sub(1),
                ];
                let p = ConvTranspose2dParams {
                    n,
                    c_in,
                    h,
                    w,
                    c_out,
                    kh,
                    kw,
                    pads,
                    strides,
                    output_padding,
                    dilations,
                    groups,
                };
                let shape = ops::conv_transpose2d_out_shape(&p);
                if op == "conv_transpose2d_out_shape" {
                    return shape.map(|_| ());
                }
                let y = c.buf("y", d, shape.ok().and_then(|s| fit(&s)));
                let x = c.input("x", d, fit(&[n, c_in, h, w]), y);
                let wt = c.input("w", d, fit(&[c_in, c_out / groups.max(1), kh, kw]), y);
                let bias = bias_wanted.then(|| c.input("bias", d, fit(&[c_out]), y));
                ops::conv_transpose2d(k, c.v(y), c.v(x), c.v(wt), bias.map(|i| c.v(i)), &p)
            }
        }
        "max_pool2d_out_shape" | "max_pool2d" | "max_pool2d_index" => {
            let (n, ch, h, w) = (c.dim("n"), c.dim("c"), c.dim("h"), c.dim("w"));
            let small = |c: &mut Case<'_>, what: &str| {
                let v = if !c.tame && c.r.one_in(8) {
                    c.r.dim()
                } else {
                    1 + c.r.below(3) as usize
                };
                c.note(what, v);
                v
            };
            let p = MaxPool2dParams {
                n,
                c: ch,
                h,
                w,
                kh: small(c, "kh"),
                kw: small(c, "kw"),
                pads: [
                    small(c, "p0").saturating_sub(1),
                    small(c, "p1").saturating_sub(1),
                    small(c, "p2").saturating_sub(1),
                    small(c, "p3").saturating_sub(1),
                ],
                strides: [small(c, "sh"), small(c, "sw")],
                dilations: [small(c, "dh"), small(c, "dw")],
            };
            let shape = ops::max_pool2d_out_shape(&p);
            if op == "max_pool2d_out_shape" {
                return shape.map(|_| ());
            }
            let fitting = shape.ok().and_then(|s| fit(&s));
            if op == "max_pool2d_index" {
                let column_major = c.r.one_in(2);
                c.note("column_major", column_major);
                let idx = c.buf("idx", DType::I64, fitting);
                let x = c.input("x", d, fit(&[n, ch, h, w]), idx);
                return ops::max_pool2d_index(k, c.v(idx), c.v(x), &p, column_major);
            }
            let y = c.buf("y", d, fitting);
            let x = c.input("x", d, fit(&[n, ch, h, w]), y);
            ops::max_pool2d(k, c.v(y), c.v(x), &p)
        }
        "numel" => {
            let shape = c.dims("shape", 6);
            ops::numel(&shape).map(|_| ())
        }
        "batch_norm" => {
            let shape = c.dims("shape", 4);
            let eps = c.param("eps");
            let ch = shape.get(1).copied().unwrap_or(1);
            let o = c.buf("out", d, fit(&shape));
            let x = c.input("x", d, fit(&shape), o);
            let p: Vec<usize> = ["scale", "bias", "mean", "var"]
                .iter()
                .map(|w| c.input(w, d, fit(&[ch]), o))
                .collect();
            ops::batch_norm(
                k,
                c.v(o),
                c.v(x),
                c.v(p[0]),
                c.v(p[1]),
                c.v(p[2]),
                c.v(p[3]),
                BatchNorm { shape: &shape, eps },
            )
        }
        "layer_norm" => {
            let (rows, n) = (c.dim("rows"), c.dim("n"));
            let eps = c.param("eps");
            let o = c.buf("out", d, fit(&[rows, n]));
            let x = c.input("x", d, fit(&[rows, n]), o);
            let s = c.input("scale", d, fit(&[n]), o);
            let b = c.input("bias", d, fit(&[n]), o);
            ops::layer_norm(
                k,
                c.v(o),
                c.v(x),
                c.v(s),
                c.v(b),
                LayerNorm { rows, n, eps },
            )
        }
        // --- norm_ext block ---
        "layer_norm_ex" => {
            let (rows, n) = (c.dim("rows"), c.dim("n"));
            let eps = c.param("eps");
            let (has_bias, has_stats) = (c.r.one_in(2), c.r.one_in(2));
            c.note("bias", has_bias);
            c.note("stats", has_stats);
            let rd = ops::compute_dtype(d);
            let o = c.buf("out", d, fit(&[rows, n]));
            let x = c.input("x", d, fit(&[rows, n]), o);
            let s = c.input("scale", d, fit(&[n]), o);
            let b = c.input("bias", d, fit(&[n]), o);
            let m = c.buf("mean", rd, fit(&[rows]));
            let is = c.buf("inv_std", rd, fit(&[rows]));
            ops::layer_norm_ex(
                k,
                c.v(o),
                c.v(x),
                c.v(s),
                has_bias.then(|| c.v(b)),
                has_stats.then(|| (c.v(m), c.v(is))),
                LayerNorm { rows, n, eps },
            )
        }
        "group_norm" => {
            let shape = c.dims("shape", 4);
            let eps = c.param("eps");
            let ch = shape.get(1).copied().unwrap_or(1);
            let groups = match c.r.below(4) {
                0 if !c.tame => c.dim("groups"),
                _ => *c.r.pick(&[1, ch.max(1)]),
            };
            c.note("groups", groups);
            let o = c.buf("out", d, fit(&shape));
            let x = c.input("x", d, fit(&shape), o);
            let s = c.input("scale", d, fit(&[ch]), o);
            let b = c.input("bias", d, fit(&[ch]), o);
            let p = ops::GroupNorm {
                shape: &shape,
                groups,
                eps,
            };
            ops::group_norm(k, c.v(o), c.v(x), c.v(s), c.v(b), p)
        }
        "rms_norm" => {
            let (rows, n) = (c.dim("rows"), c.dim("n"));
            let eps = c.param("eps");
            let o = c.buf("out", d, fit(&[rows, n]));
            let x = c.input("x", d, fit(&[rows, n]), o);
            let s = c.input("scale", d, fit(&[n]), o);
            ops::rms_norm(k, c.v(o), c.v(x), c.v(s), ops::RmsNorm { rows, n, eps })
        }
        // --- end norm_ext block ---
        "softmax_axis" => {
            let shape = c.dims("shape", 4);
            let axis = match c.r.below(6) {
                0 if !c.tame => *c.r.pick(&[i64::MIN, i64::MAX, 1 << 40]),
                _ => c.r.below(11) as i64 - 5,
            };
            c.note("axis", axis);
            let o = c.buf("out", d, fit(&shape));
            let x = c.input("x", d, fit(&shape), o);
            ops::softmax_axis(k, c.v(o), c.v(x), &shape, axis)
        }
        "argmax" | "reduce_l2" => {
            let (rows, n) = (c.dim("rows"), c.dim("n"));
            let od = if op == "argmax" && (c.tame || !c.r.one_in(8)) {
                DType::I64
            } else {
                d
            };
            let o = c.buf("out", od, fit(&[rows]));
            let x = c.buf("x", d, fit(&[rows, n]));
            if op == "argmax" {
                ops::argmax(k, c.v(o), c.v(x), rows, n)
            } else {
                ops::reduce_l2(k, c.v(o), c.v(x), rows, n)
            }
        }
        "reduce_axes" | "reduce_out_dims" => {
            let shape = c.dims("shape", 5);
            let rank = shape.len() as i64;
            let n_axes = c.r.below(4) as usize;
            let axes: Vec<i64> = (0..n_axes)
                .map(|_| match c.r.below(8) {
                    0 if !c.tame => *c.r.pick(&[i64::MIN, i64::MAX, 1 << 40, rank, -rank - 1]),
                    _ => c.r.below(2 * rank.max(1) as u64) as i64 - rank,
                })
                .collect();
            c.note("axes", &axes);
            let rop = *c.r.pick(&ops::ReduceOp::ALL);
            c.note("op", rop);
            if op == "reduce_out_dims" {
                return ops::reduce_out_dims(&shape, &axes).map(|_| ());
            }
            let out_n = ops::reduce_out_dims(&shape, &axes)
                .ok()
                .and_then(|(o, _)| fit(&o));
            let o = c.buf("out", d, out_n);
            let x = c.input("x", d, fit(&shape), o);
            ops::reduce_axes(k, c.v(o), c.v(x), &shape, &axes, rop)
        }
        "cast" => {
            // Any source and target dtype (d is the source), sometimes in place.
            let n = c.dim("n");
            let to = c.r.dtype();
            c.note("to", to);
            let a = c.buf("a", d, fit(&[n]));
            let o = if !c.tame && c.r.one_in(10) {
                c.note("out", "= a");
                a
            } else {
                c.buf("out", to, fit(&[n]))
            };
            ops::cast(k, c.v(o), c.v(a))
        }
        "compare" | "where_" | "logical" | "logical_not" => {
            // Inputs of d, an output of any dtype (where: the condition of any dtype),
            // sometimes in place.
            let n = c.dim("n");
            let other = c.r.dtype();
            c.note("other", other);
            let (x_d, out_d) = if op == "where_" {
                (other, d)
            } else {
                (d, other)
            };
            let x = c.buf("x", x_d, fit(&[n]));
            let y = c.buf("y", d, fit(&[n]));
            let o = if !c.tame && c.r.one_in(10) {
                c.note("out", "= y");
                y
            } else {
                c.buf("out", out_d, fit(&[n]))
            };
            match op {
                "compare" => {
                    let cmp = ops::CmpOp::ALL[c.r.below(6) as usize];
                    ops::compare(k, c.v(o), c.v(x), c.v(y), cmp)
                }
                "where_" => {
                    let z = c.buf("z", d, fit(&[n]));
                    ops::where_(k, c.v(o), c.v(x), c.v(y), c.v(z))
                }
                "logical" => {
                    let lop = ops::LogicOp::ALL[c.r.below(4) as usize];
                    ops::logical(k, c.v(o), c.v(x), c.v(y), lop)
                }
                _ => ops::logical_not(k, c.v(o), c.v(x)),
            }
        }
        "linear" | "linear_out_dims" => {
            let x_dims = c.dims("x_dims", 4);
            let w_dims = [c.dim("out"), c.dim("in")];
            if op == "linear_out_dims" {
                return ops::linear_out_dims(&x_dims, w_dims).map(|_| ());
            }
            let out_n = ops::linear_out_dims(&x_dims, w_dims)
                .ok()
                .and_then(|o| fit(&o));
            let y = c.buf("y", d, out_n);
            let x = c.input("x", d, fit(&x_dims), y);
            let w = c.input("w", d, fit(&w_dims), y);
            let bias = (!c.r.one_in(2)).then(|| c.input("bias", d, fit(&[w_dims[0]]), y));
            let bias = bias.map(|i| c.v(i));
            ops::linear(k, c.v(y), c.v(x), &x_dims, c.v(w), w_dims, bias)
        }
        "matmul_broadcast" | "matmul_broadcast_dims" => {
            let a_dims = c.dims("a_dims", 5);
            let b_dims = c.dims("b_dims", 5);
            if op == "matmul_broadcast_dims" {
                return ops::matmul_broadcast_dims(&a_dims, &b_dims).map(|_| ());
            }
            let out_n = ops::matmul_broadcast_dims(&a_dims, &b_dims)
                .ok()
                .and_then(|o| fit(&o));
            let o = c.buf("c", d, out_n);
            let a = c.input("a", d, fit(&a_dims), o);
            let b = c.input("b", d, fit(&b_dims), o);
            ops::matmul_broadcast(k, c.v(o), c.v(a), &a_dims, c.v(b), &b_dims)
        }
        "resize" | "resize_out_dims" => {
            let shape = c.dims("shape", 5);
            let rank = shape.len();
            // Usually one entry per axis; sometimes a lying count.
            let n_t = if !c.tame && c.r.one_in(8) {
                c.r.below(10) as usize
            } else {
                rank
            };
            let sizes: Vec<usize> = (0..n_t).map(|_| c.r.dim()).collect();
            let scales: Vec<f64> = (0..n_t)
                .map(|_| match c.r.below(8) {
                    0 if !c.tame => {
                        *c.r.pick(&[0.0, -1.0, f64::NAN, f64::INFINITY, 1e300, 1e-300])
                    }
                    v => 0.25 * v as f64 + 0.1,
                })
                .collect();
            let use_sizes = c.r.one_in(2);
            let t = if use_sizes {
                ops::ResizeTarget::Sizes(&sizes)
            } else {
                ops::ResizeTarget::Scales(&scales)
            };
            c.note("target", t);
            let spec = ops::ResizeSpec {
                mode: *c.r.pick(&[
                    ops::ResizeMode::Nearest,
                    ops::ResizeMode::Linear,
                    ops::ResizeMode::Cubic,
                ]),
                coord: *c.r.pick(&ops::CoordMode::ALL),
                nearest: *c.r.pick(&ops::NearestMode::ALL),
                cubic_a: *c.r.pick(&[-0.75, -0.5, f64::NAN, 1e300]),
                exclude_outside: c.r.one_in(2),
            };
            c.note("spec", spec);
            if op == "resize_out_dims" {
                return ops::resize_out_dims(&shape, t).map(|_| ());
            }
            let out_n = ops::resize_out_dims(&shape, t).ok().and_then(|o| fit(&o));
            let o = c.buf("out", d, out_n);
            let x = c.input("x", d, fit(&shape), o);
            ops::resize(k, c.v(o), c.v(x), &shape, t, &spec)
        }
        "gather_elements" | "scatter_elements" => {
            let (outer, axis, inner, nidx) =
                (c.dim("outer"), c.dim("axis"), c.dim("inner"), c.dim("nidx"));
            let i = c.index_buf("idx", fit(&[outer, nidx, inner]), axis);
            if op == "gather_elements" {
                let o = c.buf("out", d, fit(&[outer, nidx, inner]));
                let x = c.input("data", d, fit(&[outer, axis, inner]), o);
                ops::gather_elements(k, c.v(o), c.v(x), c.v(i), outer, axis, inner, nidx)
            } else {
                let y = c.buf("y", d, fit(&[outer, axis, inner]));
                let x = c.input("data", d, fit(&[outer, axis, inner]), y);
                let u = c.input("upd", d, fit(&[outer, nidx, inner]), y);
                let red = ops::ScatterReduction::ALL[c.r.below(5) as usize];
                c.note("reduction", red.name());
                ops::scatter_elements(
                    k,
                    c.v(y),
                    c.v(x),
                    c.v(i),
                    c.v(u),
                    outer,
                    axis,
                    inner,
                    nidx,
                    red,
                )
            }
        }
        "cumsum" => {
            let (outer, len, inner) = (c.dim("outer"), c.dim("len"), c.dim("inner"));
            let (exclusive, reverse) = (c.r.one_in(2), c.r.one_in(2));
            c.note("exclusive", exclusive);
            c.note("reverse", reverse);
            let y = c.buf("y", d, fit(&[outer, len, inner]));
            let x = c.input("x", d, fit(&[outer, len, inner]), y);
            ops::cumsum(k, c.v(y), c.v(x), outer, len, inner, exclusive, reverse)
        }
        "topk" => {
            let (outer, len, inner) = (c.dim("outer"), c.dim("len"), c.dim("inner"));
            let kk = if !c.tame && c.r.one_in(8) {
                len.saturating_add(1 + c.r.below(3) as usize)
            } else {
                c.r.below((len as u64).saturating_add(1)) as usize
            };
            let largest = c.r.one_in(2);
            c.note("k", kk);
            c.note("largest", largest);
            let v = c.buf("values", d, fit(&[outer, kk, inner]));
            let ix = c.buf("indices", DType::I64, fit(&[outer, kk, inner]));
            let x = c.input("x", d, fit(&[outer, len, inner]), v);
            ops::topk(k, c.v(v), c.v(ix), c.v(x), outer, len, inner, kk, largest)
        }
        "pad" | "pad_out_dims" => {
            let dims = c.dims("dims", 4);
            let np = if !c.tame && c.r.one_in(10) {
                c.r.below(9) as usize
            } else {
                2 * dims.len()
            };
            let pads: Vec<i64> = (0..np)
                .map(|_| {
                    if !c.tame && c.r.one_in(20) {
                        *c.r.pick(&[i64::MIN, i64::MAX, -(1 << 40), 1 << 40])
                    } else {
                        c.r.below(12) as i64 - 5
                    }
                })
                .collect();
            c.note("pads", &pads);
            let mode = ops::PadMode::ALL[c.r.below(4) as usize];
            c.note("mode", mode.name());
            if op == "pad_out_dims" {
                return ops::pad_out_dims(&dims, &pads, mode).map(|_| ());
            }
            let n_out = ops::pad_out_dims(&dims, &pads, mode)
                .ok()
                .and_then(|d| fit(&d));
            let o = c.buf("out", d, n_out);
            let x = c.input("x", d, fit(&dims), o);
            let v = c.input("value", d, Some(1), o);
            ops::pad(k, c.v(o), c.v(x), c.v(v), &dims, &pads, mode)
        }
        other => panic!("no fuzz case for op `{other}`"),
    }
}

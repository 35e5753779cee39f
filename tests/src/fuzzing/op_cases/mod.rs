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

mod linalg;
mod math;
mod movement;

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
    if let Some(r) = math::call(op, c, d) {
        return r;
    }
    if let Some(r) = movement::call(op, c, d) {
        return r;
    }
    if let Some(r) = linalg::call(op, c, d) {
        return r;
    }
    panic!("no fuzz case for op `{op}`")
}

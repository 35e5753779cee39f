//! Elementwise ops: binary (same shape and N-D stride broadcast), unary maps, user maps.

use gpukit_core::numeric::{BinaryOp, UnaryOp};
use gpukit_core::{Buf, DType, DevArg, Error, KernelDef, Kit, LaunchConfig, Result};

use crate::check;

/// `out[i] = op(a[i], b[i])` for every element; all three buffers have the same dtype
/// (any of the six) and length. `out` may be exactly `a` or `b` (in place).
///
/// Errors: [`Error::Absent`], [`Error::DeviceMismatch`], [`Error::DType`],
/// [`Error::Length`], [`Error::InvalidArgument`] for a partial overlap of `out` with an
/// input.
pub fn binary(kit: &Kit, op: BinaryOp, out: &Buf, a: &Buf, b: &Buf) -> Result<()> {
    let name = op.name();
    let ops = [(out, "out"), (a, "a"), (b, "b")];
    check::on_kit(kit, name, &ops)?;
    let d = check::same_dtype(name, &ops)?;
    check::len(name, "a", a, out.len())?;
    check::len(name, "b", b, out.len())?;
    check::no_overlap(name, out, &[(a, "a"), (b, "b")], true)?;
    let n = check::i64_of(name, "n", out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(name, d),
        check::launch_1d(out.len())?,
        &[out.into(), a.into(), b.into(), DevArg::I64(n)],
    )
}

/// `out = a + b` elementwise. See [`binary`].
pub fn add(kit: &Kit, out: &Buf, a: &Buf, b: &Buf) -> Result<()> {
    binary(kit, BinaryOp::Add, out, a, b)
}

/// `out = a - b` elementwise. See [`binary`].
pub fn sub(kit: &Kit, out: &Buf, a: &Buf, b: &Buf) -> Result<()> {
    binary(kit, BinaryOp::Sub, out, a, b)
}

/// `out = a * b` elementwise. See [`binary`].
pub fn mul(kit: &Kit, out: &Buf, a: &Buf, b: &Buf) -> Result<()> {
    binary(kit, BinaryOp::Mul, out, a, b)
}

/// `out = a / b` elementwise (integers: `x / 0 = 0`, `MIN / -1 = MIN`). See [`binary`].
pub fn div(kit: &Kit, out: &Buf, a: &Buf, b: &Buf) -> Result<()> {
    binary(kit, BinaryOp::Div, out, a, b)
}

/// `out = a^b` elementwise: gpukit's portable `pow` for floats (C99 / IEEE special
/// values: `x^0 = 1` and `1^y = 1` even for NaN, a negative base with a non-integer
/// exponent gives NaN; the ulp table is in docs/numerics.md), for integers the wrapping
/// power with `x^-n` truncated ([`gpukit_core::numeric::int_pow`]). See [`binary`].
pub fn pow(kit: &Kit, out: &Buf, a: &Buf, b: &Buf) -> Result<()> {
    binary(kit, BinaryOp::Pow, out, a, b)
}

/// The largest element offset a strided read reaches over `dims` (`None`: no element).
fn max_offset(op: &str, what: &str, dims: &[usize], strides: &[usize]) -> Result<Option<usize>> {
    if dims.contains(&0) {
        return Ok(None);
    }
    let mut m = 0usize;
    for (&d, &s) in dims.iter().zip(strides) {
        m = (d - 1)
            .checked_mul(s)
            .and_then(|x| m.checked_add(x))
            .ok_or_else(|| Error::SizeOverflow {
                what: format!("{op}: {what} strides {strides:?} over {dims:?}"),
            })?;
    }
    Ok(Some(m))
}

/// `out[c] = op(a[Σ c_d·astr_d], b[Σ c_d·bstr_d])` for every coordinate `c` of
/// `out_dims` (`out` contiguous, row-major); strides are in elements and 0 broadcasts
/// (numpy/ONNX broadcasting is the case where a dimension of size 1 gets stride 0).
/// An empty `out_dims` is a scalar. `out` must not overlap `a` or `b`.
///
/// Errors: [`Error::Shape`] when the stride lists do not have one entry per dimension
/// or a strided read passes the end of its buffer; those of [`binary`].
#[allow(clippy::too_many_arguments)]
pub fn binary_broadcast(
    kit: &Kit,
    op: BinaryOp,
    out: &Buf,
    out_dims: &[usize],
    a: &Buf,
    a_strides: &[usize],
    b: &Buf,
    b_strides: &[usize],
) -> Result<()> {
    let name = format!("{}_bc", op.name());
    let name = name.as_str();
    let ops = [(out, "out"), (a, "a"), (b, "b")];
    check::on_kit(kit, name, &ops)?;
    let d = check::same_dtype(name, &ops)?;
    for (what, s) in [("a", a_strides), ("b", b_strides)] {
        if s.len() != out_dims.len() {
            return Err(Error::Shape {
                op: name.into(),
                detail: format!(
                    "{what} has {} strides for {} output dimensions",
                    s.len(),
                    out_dims.len()
                ),
            });
        }
    }
    let n_out = check::product(name, "output dims", out_dims)?;
    check::len(name, "out", out, n_out)?;
    for (what, buf, s) in [("a", a, a_strides), ("b", b, b_strides)] {
        if let Some(m) = max_offset(name, what, out_dims, s)?
            && m >= buf.len()
        {
            return Err(Error::Shape {
                op: name.into(),
                detail: format!(
                    "{what} is read up to element {m} with strides {s:?} over {out_dims:?}, but holds {}",
                    buf.len()
                ),
            });
        }
    }
    check::no_overlap(name, out, &[(a, "a"), (b, "b")], false)?;
    if n_out == 0 {
        return Ok(());
    }
    // A scalar is a one-dimensional shape of one element.
    let (dims, astr, bstr) = if out_dims.is_empty() {
        (vec![1i64], vec![0i64], vec![0i64])
    } else {
        let conv = |v: &[usize]| -> Result<Vec<i64>> {
            v.iter()
                .map(|&x| check::i64_of(name, "shape entry", x))
                .collect()
        };
        (conv(out_dims)?, conv(a_strides)?, conv(b_strides)?)
    };
    let (bd, ba, bb) = (kit.upload(&dims)?, kit.upload(&astr)?, kit.upload(&bstr)?);
    kit.launch_builtin(
        &check::name(name, d),
        check::launch_1d(n_out)?,
        &[
            out.into(),
            a.into(),
            b.into(),
            (&bd).into(),
            (&ba).into(),
            (&bb).into(),
            DevArg::I64(dims.len() as i64),
            DevArg::I64(check::i64_of(name, "n_out", n_out)?),
        ],
    )
}

/// `out[i] = f(a[i])` for a float dtype (f32, f64, f16, bf16); `out` may be exactly `a`.
///
/// Errors: [`Error::Absent`], [`Error::DeviceMismatch`], [`Error::DType`] (integer
/// dtypes or mixed dtypes), [`Error::Length`], [`Error::InvalidArgument`] for a partial
/// overlap.
pub fn unary(kit: &Kit, op: UnaryOp, out: &Buf, a: &Buf) -> Result<()> {
    let name = op.name();
    let ops = [(out, "out"), (a, "a")];
    check::on_kit(kit, name, &ops)?;
    let d = check::same_dtype(name, &ops)?;
    check::float(name, d)?;
    check::len(name, "a", a, out.len())?;
    check::no_overlap(name, out, &[(a, "a")], true)?;
    let n = check::i64_of(name, "n", out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(name, d),
        check::launch_1d(out.len())?,
        &[out.into(), a.into(), DevArg::I64(n)],
    )
}

macro_rules! unary_fn {
    ($f:ident, $op:ident, $doc:literal) => {
        #[doc = $doc]
        ///
        /// Errors: as [`unary`].
        pub fn $f(kit: &Kit, out: &Buf, a: &Buf) -> Result<()> {
            unary(kit, UnaryOp::$op, out, a)
        }
    };
}

unary_fn!(
    relu,
    Relu,
    "`out = relu(a)`: NaN passes through; `x > 0` gives `x`, everything else +0.0."
);
unary_fn!(
    sigmoid,
    Sigmoid,
    "`out = 1 / (1 + exp(-a))` with gpukit's portable sigmoid."
);
unary_fn!(exp, Exp, "`out = exp(a)` with gpukit's portable exp.");
unary_fn!(tanh, Tanh, "`out = tanh(a)` with gpukit's portable tanh.");
unary_fn!(sqrt, Sqrt, "`out = sqrt(a)`, correctly rounded.");
unary_fn!(log, Log, "`out = log(a)` with gpukit's portable log.");
unary_fn!(
    abs,
    Abs,
    "`out = |a|`: the sign bit cleared, nothing else changed (`-0.0` gives `+0.0`, a NaN keeps its payload)."
);
unary_fn!(
    neg,
    Neg,
    "`out = -a`: the sign bit flipped, nothing else changed (`+0.0` gives `-0.0`)."
);
unary_fn!(
    rsqrt,
    Rsqrt,
    "`out = 1 / sqrt(a)`: correctly rounded sqrt, then correctly rounded division (two roundings)."
);
unary_fn!(
    silu,
    Silu,
    "`out = a * sigmoid(a)` (SiLU / swish) with gpukit's portable sigmoid; `-inf` gives `-0.0`."
);
unary_fn!(
    softplus,
    Softplus,
    "`out = log(1 + exp(a))` (ONNX Softplus) in the contract's overflow-free form ([`gpukit_core::numeric::softplus`])."
);
unary_fn!(
    sin,
    Sin,
    "`out = sin(a)` with gpukit's portable sin (exact reduction for every finite input; `sin(±inf)` is NaN)."
);
unary_fn!(
    cos,
    Cos,
    "`out = cos(a)` with gpukit's portable cos (exact reduction for every finite input; `cos(±inf)` is NaN)."
);

/// A user-defined elementwise map: one function per compute type, plus the same
/// function as a CUDA C expression in `x` (for the CUDA backend). f16/bf16 compute
/// through the f32 function. The two forms must perform the same operations in the
/// same order for the bits to agree across backends (see docs/numerics.md).
#[derive(Clone)]
pub struct MapFn {
    /// Name (part of the kernel name `map_{name}_{dtype}`; the kit caches by it).
    pub name: String,
    /// The CUDA C expression computing the result from `x` (a `float` or `double`).
    pub cuda_expr: String,
    /// The f32 form (also used for f16 and bf16).
    pub f32: fn(f32) -> f32,
    /// The f64 form.
    pub f64: fn(f64) -> f64,
}

impl std::fmt::Debug for MapFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapFn").field("name", &self.name).finish()
    }
}

fn map_cuda_source(kname: &str, d: DType, expr: &str) -> String {
    // Only the half types need the fp16/bf16 headers (which NVRTC 12.9 does not ship:
    // the CUDA backend finds them, see gpukit_cuda::nvrtc::include_dirs).
    let (ty, compute, load, store, header) = match d {
        DType::F32 => ("float", "float", "a[i]", "r", ""),
        DType::F64 => ("double", "double", "a[i]", "r", ""),
        DType::F16 => (
            "__half",
            "float",
            "__half2float(a[i])",
            "__float2half_rn(r)",
            "#include <cuda_fp16.h>\n",
        ),
        _ => (
            "__nv_bfloat16",
            "float",
            "__bfloat162float(a[i])",
            "__float2bfloat16_rn(r)",
            "#include <cuda_bf16.h>\n",
        ),
    };
    format!(
        "{header}\
         extern \"C\" __global__ void {kname}({ty}* out, const {ty}* a, long long n) {{\n\
         long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n\
         if (i < n) {{ {compute} x = {load}; {compute} r = ({expr}); out[i] = {store}; }}\n}}\n"
    )
}

fn map_kernel(f: &MapFn, d: DType) -> KernelDef {
    let kname = format!("map_{}_{}", f.name, d.name());
    let def = KernelDef::new(kname.clone()).cuda(map_cuda_source(&kname, d, &f.cuda_expr));
    macro_rules! body {
        ($t:ty, $fun:expr) => {{
            let fun = $fun;
            def.cpu(move |blk| {
                use gpukit_core::numeric::FloatElement;
                let (out, a, n) = (blk.buf::<$t>(0)?, blk.buf::<$t>(1)?, blk.i64(2)?);
                for i in blk.thread_range(usize::try_from(n).unwrap_or(0)) {
                    out.set(i, <$t>::store(fun(a.get(i).load())));
                }
                Ok(())
            })
        }};
    }
    match d {
        DType::F32 => body!(f32, f.f32),
        DType::F64 => body!(f64, f.f64),
        DType::F16 => body!(gpukit_core::half::f16, f.f32),
        _ => body!(gpukit_core::half::bf16, f.f32),
    }
}

/// `out[i] = store(f(load(a[i])))` for a user map on a float dtype; `out` may be
/// exactly `a`.
///
/// Errors: as [`unary`].
pub fn map(kit: &Kit, f: &MapFn, out: &Buf, a: &Buf) -> Result<()> {
    let name = "map";
    let ops = [(out, "out"), (a, "a")];
    check::on_kit(kit, name, &ops)?;
    let d = check::same_dtype(name, &ops)?;
    check::float(name, d)?;
    check::len(name, "a", a, out.len())?;
    check::no_overlap(name, out, &[(a, "a")], true)?;
    let n = check::i64_of(name, "n", out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    kit.launch(
        &map_kernel(f, d),
        LaunchConfig::for_elements(out.len(), 1024)?,
        &[out.into(), a.into(), DevArg::I64(n)],
    )
}

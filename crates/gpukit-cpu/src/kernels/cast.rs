//! The casts `cast_{src}_to_{dst}` (abi::cast): each output element is exactly
//! `gpukit_core::cast::CastTo::cast_to` of its input (branch-free conversions, so the
//! chunk loops vectorise inside the SIMD dispatch); large inputs split over rayon tasks
//! like the other elementwise kernels.

use gpukit_core::abi::cast::op_from;
use gpukit_core::abi::kernel_name;
use gpukit_core::cast::CastTo;
use gpukit_core::half::{bf16, f16};
use gpukit_core::{DType, Element, Result};

use super::elementwise::par_chunks;
use super::{input_slice, out_range};
use crate::args::{BuiltinArgs, BuiltinFn};
use crate::kernels::simd::dispatch;

/// `out[i] = cast(a[i])`, `i < n`. Args: out (D), a (S), n.
fn cast<S: CastTo<D>, D: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let n = args.usize(2)?;
    let out = args.buf::<D>(0)?;
    let a = args.buf::<S>(1)?;
    args.need(0, &out, n)?;
    args.need(1, &a, n)?;
    let (o0, _) = out_range(&out);
    let outs = [(o0, o0 + n * std::mem::size_of::<D>())];
    // SAFETY: a holds n elements (checked); the only buffer written is out[..n], and
    // an input overlapping it is copied before anything is written.
    let src = unsafe { input_slice(&a, n, &outs) };
    let src = &*src;
    let body = |s: usize, o: &mut [D]| {
        let e = s + o.len();
        dispatch(
            #[inline(always)]
            || {
                for (v, &x) in o.iter_mut().zip(&src[s..e]) {
                    *v = x.cast_to();
                }
            },
        )
    };
    // SAFETY: n <= out.len (checked); the input is never written (or is a copy).
    unsafe { par_chunks(&out, n, body) };
    Ok(())
}

/// `(name, entry point)` of every cast kernel, `cast_{src}_to_{dst}`.
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    macro_rules! to_all {
        ($s:ty) => {
            [
                cast::<$s, f32> as BuiltinFn,
                cast::<$s, f64>,
                cast::<$s, f16>,
                cast::<$s, bf16>,
                cast::<$s, i64>,
                cast::<$s, i32>,
            ]
        };
    }
    // Rows and columns in DType::ALL order (F32, F64, F16, BF16, I64, I32).
    let rows: [[BuiltinFn; 6]; 6] = [
        to_all!(f32),
        to_all!(f64),
        to_all!(f16),
        to_all!(bf16),
        to_all!(i64),
        to_all!(i32),
    ];
    let mut v = Vec::with_capacity(36);
    for (src, row) in DType::ALL.into_iter().zip(rows) {
        for (dst, f) in DType::ALL.into_iter().zip(row) {
            v.push((kernel_name(op_from(src), dst), f));
        }
    }
    v
}

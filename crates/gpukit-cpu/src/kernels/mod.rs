//! The CPU implementations of [`gpukit_core::abi::KERNELS`].
//!
//! Every kernel follows the same pattern: read the scalars, check (with checked
//! arithmetic) that every buffer holds what they imply, then compute. Outputs are
//! written through [`RawBuf`]; an input that overlaps an output other than exactly (an
//! in-place elementwise op) is copied first, so no `&` slice ever overlaps a `&mut` one
//! and no rayon task reads what another writes.
//!
//! Floating-point results follow the numerics contract bit for bit whatever the SIMD
//! level ([`simd`]): SIMD paths only put *different outputs* (or different lanes of the
//! reduction shape) in different vector lanes, never reorder one output's operations.

use std::borrow::Cow;
use std::sync::OnceLock;

use gpukit_core::abi::{self, kernel_name};
use gpukit_core::{DType, Element, Error, Result};

use crate::args::{BuiltinArgs, BuiltinFn, RawBuf};

mod cast;
mod compare;
mod elements;
pub(crate) mod elementwise;
mod index;
mod matmul;
pub(crate) mod reduce;
pub mod simd;
pub(crate) mod softmax;
mod topk;

/// Elements per rayon task in memory-bound kernels.
pub(crate) const PAR_GRAIN: usize = 1 << 16;

/// The entry point of `op` at `dtype`, if the CPU backend implements it.
fn entry(op: &str, dtype: DType) -> Option<BuiltinFn> {
    use gpukit_core::half::{bf16, f16};
    macro_rules! all6 {
        ($f:ident $(, $c:expr)?) => {
            match dtype {
                DType::F32 => $f::<f32 $(, $c)?> as BuiltinFn,
                DType::F64 => $f::<f64 $(, $c)?>,
                DType::F16 => $f::<f16 $(, $c)?>,
                DType::BF16 => $f::<bf16 $(, $c)?>,
                DType::I64 => $f::<i64 $(, $c)?>,
                DType::I32 => $f::<i32 $(, $c)?>,
            }
        };
    }
    macro_rules! floats {
        ($f:ident $(, $c:expr)?) => {
            match dtype {
                DType::F32 => $f::<f32 $(, $c)?> as BuiltinFn,
                DType::F64 => $f::<f64 $(, $c)?>,
                DType::F16 => $f::<f16 $(, $c)?>,
                DType::BF16 => $f::<bf16 $(, $c)?>,
                DType::I64 | DType::I32 => return None,
            }
        };
    }
    use elementwise::{binary, binary_bc, unary};
    use index::{gather, scatter};
    let f = match op {
        "add" => all6!(binary, 0),
        "sub" => all6!(binary, 1),
        "mul" => all6!(binary, 2),
        "div" => all6!(binary, 3),
        "pow" => all6!(binary, 4),
        "add_bc" => all6!(binary_bc, 0),
        "sub_bc" => all6!(binary_bc, 1),
        "mul_bc" => all6!(binary_bc, 2),
        "div_bc" => all6!(binary_bc, 3),
        "pow_bc" => all6!(binary_bc, 4),
        "relu" => floats!(unary, 0),
        "sigmoid" => floats!(unary, 1),
        "exp" => floats!(unary, 2),
        "tanh" => floats!(unary, 3),
        "sqrt" => floats!(unary, 4),
        "log" => floats!(unary, 5),
        "abs" => floats!(unary, 6),
        "neg" => floats!(unary, 7),
        "rsqrt" => floats!(unary, 8),
        "silu" => floats!(unary, 9),
        "softplus" => floats!(unary, 10),
        "sin" => floats!(unary, 11),
        "cos" => floats!(unary, 12),
        "bmm" => floats!(bmm_entry),
        "gather" => all6!(gather),
        "scatter" => all6!(scatter),
        "check_index" if dtype == DType::I64 => index::check_index as BuiltinFn,
        "softmax" => floats!(softmax_entry),
        "sum" => all6!(sum_entry),
        "dot" => floats!(dot_entry),
        _ => return None,
    };
    Some(f)
}

use matmul::bmm as bmm_entry;
use reduce::{dot as dot_entry, sum as sum_entry};
use softmax::softmax as softmax_entry;

/// `(name, entry point)` for every built-in kernel.
pub(crate) fn table() -> &'static [(String, BuiltinFn)] {
    static TABLE: OnceLock<Vec<(String, BuiltinFn)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut v: Vec<(String, BuiltinFn)> = Vec::new();
        for sig in abi::KERNELS {
            for &d in sig.dtypes {
                if let Some(f) = entry(sig.op, d) {
                    v.push((kernel_name(sig.op, d), f));
                }
            }
        }
        v.extend(crate::nn::entries());
        v.extend(cast::entries());
        v.extend(compare::entries());
        v.extend(elements::entries());
        v.extend(topk::entries());
        v
    })
}

/// An [`Error::Argument`] for `args`' kernel.
pub(crate) fn arg_err<T>(
    args: &BuiltinArgs<'_>,
    index: usize,
    reason: impl Into<String>,
) -> Result<T> {
    Err(Error::Argument {
        kernel: args.kernel().to_string(),
        index,
        reason: reason.into(),
    })
}

/// `a * b` or an [`Error::Argument`] on overflow.
pub(crate) fn mul(args: &BuiltinArgs<'_>, index: usize, a: usize, b: usize) -> Result<usize> {
    match a.checked_mul(b) {
        Some(v) => Ok(v),
        None => arg_err(args, index, format!("size {a} * {b} overflows")),
    }
}

/// The byte range `[start, end)` a buffer covers.
fn byte_range<T: Element>(b: &RawBuf<'_, T>) -> (usize, usize) {
    let start = b.ptr() as usize;
    (start, start + b.len() * std::mem::size_of::<T>())
}

/// The first `n` elements of `input` as a slice that no output of the launch writes:
/// borrowed when `input` overlaps none of `outputs` (whose byte ranges are given),
/// otherwise a copy taken before anything is written.
///
/// # Safety
/// `n <= input.len()`, and nothing writes `input` while the result lives except
/// through the buffers listed in `outputs`.
pub(crate) unsafe fn input_slice<'a, T: Element>(
    input: &RawBuf<'a, T>,
    n: usize,
    outputs: &[(usize, usize)],
) -> Cow<'a, [T]> {
    let (s, e) = byte_range(input);
    let clash = outputs
        .iter()
        .any(|&(o0, o1)| s < e && o0 < o1 && s < o1 && o0 < e);
    // SAFETY: the whole buffer is live; with no output overlapping it nothing writes
    // it during the launch (caller), and a copy is taken before any write.
    let full = unsafe { input.slice() };
    if clash {
        Cow::Owned(full[..n].to_vec())
    } else {
        Cow::Borrowed(&full[..n])
    }
}

/// The byte range of an output buffer, for [`input_slice`].
pub(crate) fn out_range<T: Element>(b: &RawBuf<'_, T>) -> (usize, usize) {
    byte_range(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_abi_exactly() {
        let mut want = abi::all_kernel_names();
        want.sort();
        let got = crate::builtins::names();
        assert_eq!(got, want);
        for n in abi::all_kernel_names() {
            assert!(crate::builtins::lookup(&n).is_some(), "{n} missing");
        }
        // Every signature's dtypes are all implemented (entry never declines one).
        for sig in abi::KERNELS {
            for &d in sig.dtypes {
                assert!(entry(sig.op, d).is_some(), "{}_{d}", sig.op);
            }
        }
    }
}

//! Comparisons, select and logical ops on masks (abi::compare): each output element is
//! exactly `gpukit_core::compare`'s rule for its inputs. The op is matched once per
//! chunk, outside the loops, so each loop is branch-free and vectorises inside the SIMD
//! dispatch; large inputs split over rayon tasks like the other elementwise kernels.

use gpukit_core::abi::compare::{compare_from, logical_from, where_by};
use gpukit_core::abi::kernel_name;
use gpukit_core::compare::{CmpOp, LogicOp, MaskElement};
use gpukit_core::half::{bf16, f16};
use gpukit_core::{DType, Element, Error, Result};

use super::elementwise::par_chunks;
use super::{input_slice, out_range};
use crate::args::{BuiltinArgs, BuiltinFn};
use crate::kernels::simd::dispatch;

/// Writes `f(a[i], b[i])` as 1 / 0 into `out[..n]` for `i < n`; `out` is argument 0,
/// `a` and `b` arguments 1 and 2.
fn two_to_mask<S: Element, D: Element + MaskElement>(
    args: &BuiltinArgs<'_>,
    n: usize,
    f: impl Fn(S, S) -> bool + Sync + Send + Copy,
) -> Result<()> {
    let out = args.buf::<D>(0)?;
    let a = args.buf::<S>(1)?;
    let b = args.buf::<S>(2)?;
    args.need(0, &out, n)?;
    args.need(1, &a, n)?;
    args.need(2, &b, n)?;
    let (o0, _) = out_range(&out);
    let outs = [(o0, o0 + n * std::mem::size_of::<D>())];
    // SAFETY: a and b hold n elements (checked); the only buffer written is out[..n],
    // and an input overlapping it is copied before anything is written.
    let (sa, sb) = unsafe { (input_slice(&a, n, &outs), input_slice(&b, n, &outs)) };
    let (sa, sb) = (&*sa, &*sb);
    let body = |s: usize, o: &mut [D]| {
        let e = s + o.len();
        dispatch(
            #[inline(always)]
            || {
                for ((v, &x), &y) in o.iter_mut().zip(&sa[s..e]).zip(&sb[s..e]) {
                    *v = D::from_bool(f(x, y));
                }
            },
        )
    };
    // SAFETY: n <= out.len (checked); the inputs are never written (or are copies).
    unsafe { par_chunks(&out, n, body) };
    Ok(())
}

fn bad_code<T>(args: &BuiltinArgs<'_>, code: i64, what: &str) -> Result<T> {
    Err(Error::Argument {
        kernel: args.kernel().to_string(),
        index: 3,
        reason: format!("op code {code} is not a {what}"),
    })
}

/// `out[i] = op(a[i], b[i])` as 1 / 0. Args: out (D), a (S), b (S), op, n.
fn compare<S: Element + MaskElement, D: Element + MaskElement>(
    args: &BuiltinArgs<'_>,
) -> Result<()> {
    let n = args.usize(4)?;
    let code = args.i64(3)?;
    let Some(op) = CmpOp::from_code(code) else {
        return bad_code(args, code, "comparison (0..6)");
    };
    // One monomorphised loop per op: the op is a constant inside each.
    match op {
        CmpOp::Eq => two_to_mask::<S, D>(args, n, |x, y| x.compare(y, CmpOp::Eq)),
        CmpOp::Ne => two_to_mask::<S, D>(args, n, |x, y| x.compare(y, CmpOp::Ne)),
        CmpOp::Lt => two_to_mask::<S, D>(args, n, |x, y| x.compare(y, CmpOp::Lt)),
        CmpOp::Le => two_to_mask::<S, D>(args, n, |x, y| x.compare(y, CmpOp::Le)),
        CmpOp::Gt => two_to_mask::<S, D>(args, n, |x, y| x.compare(y, CmpOp::Gt)),
        CmpOp::Ge => two_to_mask::<S, D>(args, n, |x, y| x.compare(y, CmpOp::Ge)),
    }
}

/// `out[i] = op(a[i] != 0, b[i] != 0)` as 1 / 0. Args: out (D), a (S), b (S), op, n.
fn logical<S: Element + MaskElement, D: Element + MaskElement>(
    args: &BuiltinArgs<'_>,
) -> Result<()> {
    let n = args.usize(4)?;
    let code = args.i64(3)?;
    let Some(op) = LogicOp::from_code(code) else {
        return bad_code(args, code, "logical op (0..4)");
    };
    match op {
        LogicOp::And => two_to_mask::<S, D>(args, n, |x, y| x.truthy() & y.truthy()),
        LogicOp::Or => two_to_mask::<S, D>(args, n, |x, y| x.truthy() | y.truthy()),
        LogicOp::Xor => two_to_mask::<S, D>(args, n, |x, y| x.truthy() ^ y.truthy()),
        LogicOp::Not => two_to_mask::<S, D>(args, n, |x, _| !x.truthy()),
    }
}

/// `out[i] = cond[i] != 0 ? a[i] : b[i]` (bits). Args: out (T), cond (C), a, b (T), n.
fn select<C: Element + MaskElement, T: Element>(args: &BuiltinArgs<'_>) -> Result<()> {
    let n = args.usize(4)?;
    let out = args.buf::<T>(0)?;
    let cond = args.buf::<C>(1)?;
    let a = args.buf::<T>(2)?;
    let b = args.buf::<T>(3)?;
    args.need(0, &out, n)?;
    args.need(1, &cond, n)?;
    args.need(2, &a, n)?;
    args.need(3, &b, n)?;
    let (o0, _) = out_range(&out);
    let outs = [(o0, o0 + n * std::mem::size_of::<T>())];
    // SAFETY: every input holds n elements (checked); the only buffer written is
    // out[..n], and an input overlapping it is copied before anything is written.
    let (sc, sa, sb) = unsafe {
        (
            input_slice(&cond, n, &outs),
            input_slice(&a, n, &outs),
            input_slice(&b, n, &outs),
        )
    };
    let (sc, sa, sb) = (&*sc, &*sa, &*sb);
    let body = |s: usize, o: &mut [T]| {
        let e = s + o.len();
        dispatch(
            #[inline(always)]
            || {
                let ins = sc[s..e].iter().zip(&sa[s..e]).zip(&sb[s..e]);
                for (v, ((&c, &x), &y)) in o.iter_mut().zip(ins) {
                    *v = if c.truthy() { x } else { y };
                }
            },
        )
    };
    // SAFETY: n <= out.len (checked); the inputs are never written (or are copies).
    unsafe { par_chunks(&out, n, body) };
    Ok(())
}

/// The op name of a family from its dtype.
type OpOf = fn(DType) -> &'static str;
/// Entry points by (family dtype, kernel dtype).
type Table = [[BuiltinFn; 6]; 6];

/// `(name, entry point)` of every comparison, select and logical kernel.
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    macro_rules! row {
        ($f:ident, $s:ty) => {
            [
                $f::<$s, f32> as BuiltinFn,
                $f::<$s, f64>,
                $f::<$s, f16>,
                $f::<$s, bf16>,
                $f::<$s, i64>,
                $f::<$s, i32>,
            ]
        };
    }
    macro_rules! table {
        ($f:ident) => {
            [
                row!($f, f32),
                row!($f, f64),
                row!($f, f16),
                row!($f, bf16),
                row!($f, i64),
                row!($f, i32),
            ]
        };
    }
    // Rows (the family's dtype) and columns (the kernel's dtype) in DType::ALL order.
    let groups: [(OpOf, Table); 3] = [
        (compare_from, table!(compare)),
        (where_by, table!(select)),
        (logical_from, table!(logical)),
    ];
    let mut v = Vec::with_capacity(108);
    for (op_of, rows) in groups {
        for (fam, row) in DType::ALL.into_iter().zip(rows) {
            for (dst, f) in DType::ALL.into_iter().zip(row) {
                v.push((kernel_name(op_of(fam), dst), f));
            }
        }
    }
    v
}

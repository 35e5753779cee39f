//! Comparisons, `where_` (select) and logical ops on masks, elementwise over buffers of
//! one length (the contract of `gpukit_core::compare`; docs/numerics.md, "Comparisons
//! and masks"). There is no bool dtype: a mask is any dtype, written as 1 / 0, read as
//! nonzero = true.

use gpukit_core::abi::compare::{compare_from, logical_from, where_by};
use gpukit_core::{Buf, DevArg, Error, Kit, Result};

use crate::check;
pub use gpukit_core::compare::{CmpOp, LogicOp};

/// Every operand has `out`'s length; the error names the op, the operand, the dtypes
/// and both lengths.
fn lengths(op: &str, out: &Buf, inputs: &[(&Buf, &str)]) -> Result<()> {
    for (b, name) in inputs {
        if b.len() != out.len() {
            return Err(Error::Length {
                what: format!(
                    "{op}: `{name}` ({}) for out ({}) of {}",
                    b.dtype(),
                    out.dtype(),
                    out.len()
                ),
                expected: out.len(),
                got: b.len(),
            });
        }
    }
    Ok(())
}

/// `out[i] = op(a[i], b[i])`: 1 where the comparison holds, 0 where not, in `out`'s
/// dtype (any of the six). `a` and `b` share one dtype, which may differ from `out`'s.
///
/// IEEE rules: any comparison with a NaN is false except [`CmpOp::Ne`] (true);
/// `-0.0 == +0.0`; f16 and bf16 compare by their exact values; integers as integers
/// (i64 beyond 2^53 exactly). ONNX's `Equal`, `Less`, `LessOrEqual`, `Greater`,
/// `GreaterOrEqual` (and `Not(Equal)` for `ne`) are this op followed by a cast of the
/// mask to bool.
///
/// `out` may be exactly `a` or `b` when it has their dtype (in place); no other overlap.
///
/// For example `lt` of `[1.0f32, NaN, -0.0]` and `[2.0, 1.0, 0.0]` into i32 is
/// `[1, 0, 0]`; `ne` of the same is `[1, 1, 0]`.
///
/// Errors: [`Error::Absent`] for an absent buffer; [`Error::DeviceMismatch`] for a
/// buffer of another kit; [`Error::DType`] naming the op when `b`'s dtype is not `a`'s;
/// [`Error::Length`] naming the op, the operand, the dtypes and the lengths when they
/// differ; [`Error::InvalidArgument`] for an overlap other than exactly in place.
pub fn compare(kit: &Kit, out: &Buf, a: &Buf, b: &Buf, op: CmpOp) -> Result<()> {
    let name = format!("compare {}", op.name());
    check::on_kit(kit, &name, &[(out, "out"), (a, "a"), (b, "b")])?;
    let src = check::same_dtype(&name, &[(a, "a"), (b, "b")])?;
    lengths(&name, out, &[(a, "a"), (b, "b")])?;
    check::no_overlap(&name, out, &[(a, "a"), (b, "b")], true)?;
    let n = check::i64_of(&name, "n", out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(compare_from(src), out.dtype()),
        check::launch_1d(out.len())?,
        &[
            out.into(),
            a.into(),
            b.into(),
            DevArg::I64(op.code()),
            DevArg::I64(n),
        ],
    )
}

/// `out[i] = a[i]` where `cond[i]` is nonzero, `b[i]` elsewhere (the bits copied, NaN
/// payloads kept): numpy's `where`, ONNX's `Where`. `cond` may have any dtype (true =
/// nonzero; NaN is true, -0.0 is false); `a`, `b` and `out` share one dtype.
///
/// `out` may be exactly `a`, `b`, or `cond` (when `cond` has `out`'s dtype); no other
/// overlap.
///
/// For example `cond = [1i32, 0, -3]`, `a = [1.0, 2.0, 3.0]`, `b = [-1.0, -2.0, -3.0]`
/// gives `[1.0, -2.0, 3.0]`.
///
/// Errors: [`Error::Absent`]; [`Error::DeviceMismatch`]; [`Error::DType`] naming `where`
/// when `a`, `b` and `out` differ in dtype; [`Error::Length`] naming the operand, the
/// dtypes and the lengths; [`Error::InvalidArgument`] for an overlap other than exactly
/// in place.
pub fn where_(kit: &Kit, out: &Buf, cond: &Buf, a: &Buf, b: &Buf) -> Result<()> {
    let name = "where";
    check::on_kit(
        kit,
        name,
        &[(out, "out"), (cond, "cond"), (a, "a"), (b, "b")],
    )?;
    let d = check::same_dtype(name, &[(out, "out"), (a, "a"), (b, "b")])?;
    lengths(name, out, &[(cond, "cond"), (a, "a"), (b, "b")])?;
    check::no_overlap(name, out, &[(cond, "cond"), (a, "a"), (b, "b")], true)?;
    let n = check::i64_of(name, "n", out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(where_by(cond.dtype()), d),
        check::launch_1d(out.len())?,
        &[out.into(), cond.into(), a.into(), b.into(), DevArg::I64(n)],
    )
}

/// `out[i] = op(a[i] != 0, b[i] != 0)` as 1 / 0 in `out`'s dtype: the masks `a` and `b`
/// share one dtype (any; NaN is true, -0.0 false), which may differ from `out`'s.
/// ONNX's `And`, `Or`, `Xor` (on bool tensors: this op on their 0/1 casts).
/// [`LogicOp::Not`] here ignores `b` (use [`logical_not`]).
///
/// `out` may be exactly `a` or `b` when it has their dtype; no other overlap.
///
/// Errors: as [`compare`], naming `logical {op}`.
pub fn logical(kit: &Kit, out: &Buf, a: &Buf, b: &Buf, op: LogicOp) -> Result<()> {
    if op == LogicOp::Not {
        return logical_not(kit, out, a);
    }
    let name = format!("logical {}", op.name());
    check::on_kit(kit, &name, &[(out, "out"), (a, "a"), (b, "b")])?;
    let src = check::same_dtype(&name, &[(a, "a"), (b, "b")])?;
    lengths(&name, out, &[(a, "a"), (b, "b")])?;
    check::no_overlap(&name, out, &[(a, "a"), (b, "b")], true)?;
    launch_logical(kit, out, a, b, op.code(), src, &name)
}

/// `out[i] = 1` where `a[i]` is zero (-0.0 included), 0 elsewhere (NaN is true, so its
/// `not` is 0), in `out`'s dtype; `a` may have any dtype. ONNX's `Not`.
///
/// `out` may be exactly `a` when it has `a`'s dtype; no other overlap.
///
/// Errors: [`Error::Absent`]; [`Error::DeviceMismatch`]; [`Error::Length`] naming
/// `logical not`, the dtypes and the lengths; [`Error::InvalidArgument`] for an
/// overlap other than exactly in place.
pub fn logical_not(kit: &Kit, out: &Buf, a: &Buf) -> Result<()> {
    let name = "logical not";
    check::on_kit(kit, name, &[(out, "out"), (a, "a")])?;
    lengths(name, out, &[(a, "a")])?;
    check::no_overlap(name, out, &[(a, "a")], true)?;
    launch_logical(kit, out, a, a, LogicOp::Not.code(), a.dtype(), name)
}

fn launch_logical(
    kit: &Kit,
    out: &Buf,
    a: &Buf,
    b: &Buf,
    code: i64,
    src: gpukit_core::DType,
    name: &str,
) -> Result<()> {
    let n = check::i64_of(name, "n", out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(logical_from(src), out.dtype()),
        check::launch_1d(out.len())?,
        &[
            out.into(),
            a.into(),
            b.into(),
            DevArg::I64(code),
            DevArg::I64(n),
        ],
    )
}

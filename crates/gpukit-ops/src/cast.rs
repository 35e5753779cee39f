//! `cast`: converting a buffer of one dtype into a buffer of another.

use gpukit_core::abi::cast::op_from;
use gpukit_core::{Buf, DevArg, Error, Kit, Result};

use crate::check;

/// `out[i] = a[i]` converted to `out`'s dtype, for every element; `a` and `out` may
/// have any of the six dtypes (the kernel `cast_{a's dtype}_to_{out's dtype}`).
///
/// The conversion rules (docs/numerics.md, "Casts"; `gpukit_core::cast`):
/// - to a float (from a float or an integer): one rounding of the exact value to
///   nearest, ties to even (never two: f64 → f16/bf16 and i64/i32 → f16/bf16 round
///   once); subnormals kept; NaN gives a NaN (payload unspecified); ±inf and -0.0
///   kept; a finite value beyond the target's range gives ±inf;
/// - float → integer: truncation toward zero, NaN → 0, saturation at the integer
///   type's min / max (Rust's `as`);
/// - i64 → i32 wraps (two's complement truncation), i32 → i64 sign-extends;
/// - the same dtype: a copy of the bits.
///
/// `out` must have `a`'s length. It may be exactly `a` only when the dtypes are the
/// same (then nothing changes); any other overlap is refused.
///
/// For example `[1.5f64, -2.7, NaN, 1e300]` cast to i32 is `[1, -2, 0, i32::MAX]`, and
/// to f16 is `[1.5, -2.69921875, NaN, inf]`.
///
/// Errors: [`Error::Absent`] for an absent buffer; [`Error::DeviceMismatch`] for a
/// buffer of another kit; [`Error::Length`] naming `cast`, the dtypes and both lengths
/// when they differ; [`Error::InvalidArgument`] when `out` overlaps `a` (other than
/// exactly, with the same dtype).
pub fn cast(kit: &Kit, out: &Buf, a: &Buf) -> Result<()> {
    let name = "cast";
    check::on_kit(kit, name, &[(out, "out"), (a, "a")])?;
    let (src, dst) = (a.dtype(), out.dtype());
    if a.len() != out.len() {
        return Err(Error::Length {
            what: format!(
                "cast {src} -> {dst}: out ({dst}) for a ({src}) of {}",
                a.len()
            ),
            expected: a.len(),
            got: out.len(),
        });
    }
    let exact_ok = src == dst;
    if check::overlaps(out, a) && !(exact_ok && check::same_range(out, a)) {
        return Err(Error::InvalidArgument {
            op: name.into(),
            reason: format!(
                "the output ({dst}) overlaps the input ({src}){}",
                if exact_ok {
                    " without being exactly the same range"
                } else {
                    ": a cast between different dtypes cannot run in place"
                }
            ),
        });
    }
    let n = check::i64_of(name, "n", out.len())?;
    if out.is_empty() {
        return Ok(());
    }
    kit.launch_builtin(
        &check::name(op_from(src), dst),
        check::launch_1d(out.len())?,
        &[out.into(), a.into(), DevArg::I64(n)],
    )
}

//! Kernel signatures of the `cast` group: one family per source dtype.
//!
//! `cast_{src}_to_{dst}` converts `n` elements of `a` (dtype `src`) into `out` (dtype
//! `dst`, the kernel's dtype) by the cast contract of [`crate::cast`]
//! (docs/numerics.md, "Casts"): one rounding to nearest even for every float target,
//! truncation with saturation (NaN -> 0) for float -> integer, wrapping i64 -> i32,
//! a copy of the bits for `src == dst`. `out` overlaps `a` only when `src == dst` and
//! the ranges are exactly the same.

use super::{ALL_DTYPES, KernelSig};
use crate::DType;

const ALL: &[DType] = &ALL_DTYPES;

/// The op name of the cast family reading `src`: `cast_{src}_to` (kernels
/// `cast_{src}_to_{dst}`).
pub const fn op_from(src: DType) -> &'static str {
    match src {
        DType::F32 => "cast_f32_to",
        DType::F64 => "cast_f64_to",
        DType::F16 => "cast_f16_to",
        DType::BF16 => "cast_bf16_to",
        DType::I64 => "cast_i64_to",
        DType::I32 => "cast_i32_to",
    }
}

/// The source dtype of cast family `op` (`cast_{src}_to`), `None` for any other op.
pub fn source_of(op: &str) -> Option<DType> {
    DType::ALL.into_iter().find(|&d| op_from(d) == op)
}

/// The `cast` group's kernels (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = &[
    KernelSig {
        op: "cast_f32_to",
        dtypes: ALL,
        args: "out: buf, a: buf<f32>, n",
    },
    KernelSig {
        op: "cast_f64_to",
        dtypes: ALL,
        args: "out: buf, a: buf<f64>, n",
    },
    KernelSig {
        op: "cast_f16_to",
        dtypes: ALL,
        args: "out: buf, a: buf<f16>, n",
    },
    KernelSig {
        op: "cast_bf16_to",
        dtypes: ALL,
        args: "out: buf, a: buf<bf16>, n",
    },
    KernelSig {
        op: "cast_i64_to",
        dtypes: ALL,
        args: "out: buf, a: buf<i64>, n",
    },
    KernelSig {
        op: "cast_i32_to",
        dtypes: ALL,
        args: "out: buf, a: buf<i32>, n",
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_name_their_source() {
        for d in DType::ALL {
            assert_eq!(source_of(op_from(d)), Some(d));
            let sig = KERNELS.iter().find(|s| s.op == op_from(d)).unwrap();
            assert!(sig.args.contains(&format!("buf<{d}>")), "{}", sig.args);
        }
        assert_eq!(source_of("cast"), None);
        assert_eq!(
            super::super::kernel_name(op_from(DType::F64), DType::BF16),
            "cast_f64_to_bf16"
        );
    }
}

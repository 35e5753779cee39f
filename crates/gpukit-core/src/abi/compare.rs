//! Kernel signatures of the comparison, select and logical groups (the contract of
//! [`crate::compare`]; docs/numerics.md, "Comparisons and masks"). One family per
//! dtype that is not the kernel's own:
//!
//! - `compare_{src}_to_{dst}(out: dst, a: src, b: src, op, n)`: `out[i] = op(a[i],
//!   b[i])` as 1 / 0 in `dst`, `op` a [`crate::compare::CmpOp`] code (0..6);
//! - `where_{cond}_cond_{dtype}(out, cond: cond, a, b, n)`: `out[i] = cond[i] != 0 ?
//!   a[i] : b[i]` (bits copied), `out`, `a`, `b` of the kernel's dtype;
//! - `logical_{src}_to_{dst}(out: dst, a: src, b: src, op, n)`: `out[i] = op(a[i] != 0,
//!   b[i] != 0)` as 1 / 0, `op` a [`crate::compare::LogicOp`] code (0..4; `not` reads
//!   only `a`, and `b` is passed as `a`).
//!
//! `out` may be exactly an input of its own dtype (in place); no other overlap.

use super::{ALL_DTYPES, KernelSig};
use crate::DType;

const ALL: &[DType] = &ALL_DTYPES;

/// The op name of the comparison family reading `src`: `compare_{src}_to`.
pub const fn compare_from(src: DType) -> &'static str {
    match src {
        DType::F32 => "compare_f32_to",
        DType::F64 => "compare_f64_to",
        DType::F16 => "compare_f16_to",
        DType::BF16 => "compare_bf16_to",
        DType::I64 => "compare_i64_to",
        DType::I32 => "compare_i32_to",
    }
}

/// The op name of the select family whose condition is `cond`: `where_{cond}_cond`.
pub const fn where_by(cond: DType) -> &'static str {
    match cond {
        DType::F32 => "where_f32_cond",
        DType::F64 => "where_f64_cond",
        DType::F16 => "where_f16_cond",
        DType::BF16 => "where_bf16_cond",
        DType::I64 => "where_i64_cond",
        DType::I32 => "where_i32_cond",
    }
}

/// The op name of the logical family reading masks of `src`: `logical_{src}_to`.
pub const fn logical_from(src: DType) -> &'static str {
    match src {
        DType::F32 => "logical_f32_to",
        DType::F64 => "logical_f64_to",
        DType::F16 => "logical_f16_to",
        DType::BF16 => "logical_bf16_to",
        DType::I64 => "logical_i64_to",
        DType::I32 => "logical_i32_to",
    }
}

/// Which group op `op` belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `compare_{src}_to`, with the inputs' dtype.
    Compare(DType),
    /// `where_{cond}_cond`, with the condition's dtype.
    Where(DType),
    /// `logical_{src}_to`, with the masks' dtype.
    Logical(DType),
}

/// The family of op `op`, `None` for an op outside these groups.
pub fn family(op: &str) -> Option<Family> {
    DType::ALL.into_iter().find_map(|d| {
        if op == compare_from(d) {
            Some(Family::Compare(d))
        } else if op == where_by(d) {
            Some(Family::Where(d))
        } else if op == logical_from(d) {
            Some(Family::Logical(d))
        } else {
            None
        }
    })
}

macro_rules! sigs {
    ($($d:literal),*) => {
        &[
            $(KernelSig {
                op: concat!("compare_", $d, "_to"),
                dtypes: ALL,
                args: concat!("out: buf, a: buf<", $d, ">, b: buf<", $d, ">, op, n"),
            },)*
            $(KernelSig {
                op: concat!("where_", $d, "_cond"),
                dtypes: ALL,
                args: concat!("out: buf, cond: buf<", $d, ">, a: buf, b: buf, n"),
            },)*
            $(KernelSig {
                op: concat!("logical_", $d, "_to"),
                dtypes: ALL,
                args: concat!("out: buf, a: buf<", $d, ">, b: buf<", $d, ">, op, n"),
            },)*
        ]
    };
}

/// The comparison, select and logical kernels (joined into [`super::all_kernels`]).
pub const KERNELS: &[KernelSig] = sigs!("f32", "f64", "f16", "bf16", "i64", "i32");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_name_their_dtype() {
        for d in DType::ALL {
            assert_eq!(family(compare_from(d)), Some(Family::Compare(d)));
            assert_eq!(family(where_by(d)), Some(Family::Where(d)));
            assert_eq!(family(logical_from(d)), Some(Family::Logical(d)));
            for op in [compare_from(d), where_by(d), logical_from(d)] {
                let sig = KERNELS.iter().find(|s| s.op == op).unwrap();
                assert!(sig.args.contains(&format!("buf<{d}>")), "{}", sig.args);
            }
        }
        assert_eq!(KERNELS.len(), 18);
        assert_eq!(family("compare"), None);
        assert_eq!(
            super::super::kernel_name(where_by(DType::F16), DType::I32),
            "where_f16_cond_i32"
        );
    }
}

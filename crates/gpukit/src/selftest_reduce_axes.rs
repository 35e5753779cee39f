//! Self-checks of the reductions along axes (`reduce_axes`): at each dtype every
//! reduction the dtype takes, over a few axis sets of one random tensor (NaN, ±inf,
//! -0.0 and subnormals among the float values; one line past a reduction chunk),
//! compared bit for bit with the reference oracle.

use gpukit_core::half::{bf16, f16};
use gpukit_core::{DType, Kit, Result};
use gpukit_reference::{self as reference, ReduceElem};

use crate::ops::{self, ReduceOp};
use crate::selftest_common::{Check, Rng, mismatch, rand_vec};

/// `(dims, axes)` of the cases: a middle axis, leading and trailing axes together,
/// everything (empty axes), and a line past one chunk.
const CASES: &[(&[usize], &[i64])] = &[
    (&[3, 37, 5], &[1]),
    (&[3, 37, 5], &[0, -1]),
    (&[4, 9], &[]),
    (&[2, 8219], &[-1]),
];

fn reduce_axes<T: ReduceElem>(kit: &Kit, seed: u64) -> Result<Option<String>> {
    let mut rng = Rng::new(seed ^ 0x5a);
    let int = matches!(T::DTYPE, DType::I32 | DType::I64);
    for &(dims, axes) in CASES {
        let x = rand_vec::<T>(&mut rng, dims.iter().product());
        let bx = kit.upload(&x)?;
        let (out_dims, _) = ops::reduce_out_dims(dims, axes)?;
        let out = kit.alloc(T::DTYPE, out_dims.iter().product())?;
        for op in ReduceOp::ALL
            .into_iter()
            .filter(|o| !int || o.supports_ints())
        {
            ops::reduce_axes(kit, &out, &bx, dims, axes, op)?;
            let want = reference::reduce_axes(&x, dims, axes, op);
            if let Some(m) = mismatch(&out.download::<T>()?, &want) {
                return Ok(Some(format!("{op} {dims:?} axes {axes:?}: {m}")));
            }
        }
    }
    Ok(None)
}

/// The group's checks, in a fixed order (one per dtype of `reduce_axes`).
pub(crate) fn checks() -> Vec<Check> {
    let c = |dtype, run| Check {
        op: "reduce_axes",
        dtype,
        run,
    };
    vec![
        c(DType::F32, reduce_axes::<f32>),
        c(DType::F64, reduce_axes::<f64>),
        c(DType::F16, reduce_axes::<f16>),
        c(DType::BF16, reduce_axes::<bf16>),
        c(DType::I64, reduce_axes::<i64>),
        c(DType::I32, reduce_axes::<i32>),
    ]
}

//! Plan for `kernels-cuda/reduce_axes.cu`: one launch, one warp per output (8 warps per
//! 256-thread block, grid-stride over the outputs); every output's whole reduction
//! shape runs in its warp (`gk_warp_fold`, chunks included), so there is no scratch.
//! `n_out = 0` launches nothing.

use super::{BLOCK_1D, Call, MAX_GRID_1D, Plan, Step};
use gpukit_core::reduce_axes::MAX_RANK;
use gpukit_core::{Dim3, LaunchConfig, Result};

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[];

/// Warps per block (the kernel's `RA_BLOCK / 32`).
const WARPS: u64 = (BLOCK_1D / 32) as u64;

/// The launches of `reduce_axes` (args out, x, dims, strides, ndim, nkeep, n_out,
/// n_red, code).
pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    let ndim = c.count(4)?;
    if ndim == 0 || ndim > MAX_RANK as u64 {
        return Err(c.bad(4, "ndim in 1..=8"));
    }
    if c.count(5)? > ndim {
        return Err(c.bad(5, "nkeep <= ndim"));
    }
    c.count(7)?;
    c.count(8)?;
    let n_out = c.count(6)?;
    if n_out == 0 {
        return Ok(Plan::default());
    }
    let blocks = n_out.div_ceil(WARPS).min(MAX_GRID_1D as u64) as u32;
    Ok(Plan {
        scratch_bytes: 0,
        steps: vec![Step {
            entry: c.entry(),
            cfg: LaunchConfig {
                grid: Dim3::x(blocks),
                block: Dim3::x(BLOCK_1D),
                shared_bytes: 0,
            },
            args: c.all_args(),
        }],
    })
}

#[cfg(test)]
mod tests {
    use super::super::plan as plan_of;
    use super::super::testing::buf;
    use gpukit_core::{DType, KernelArg};

    #[test]
    fn one_warp_per_output() {
        let i = KernelArg::I64;
        let args = |n_out: i64, ndim: i64| {
            vec![
                buf(0x1000, DType::F32),
                buf(0x2000, DType::F32),
                buf(0x3000, DType::I64),
                buf(0x4000, DType::I64),
                i(ndim),
                i(1),
                i(n_out),
                i(5),
                i(0),
            ]
        };
        let p = plan_of("reduce_axes_f32", &args(17, 2)).unwrap();
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.steps[0].entry, "reduce_axes_f32");
        assert_eq!(p.steps[0].cfg.grid.x, 3);
        assert_eq!(p.scratch_bytes, 0);
        assert!(
            plan_of("reduce_axes_f32", &args(0, 2))
                .unwrap()
                .steps
                .is_empty()
        );
        assert!(plan_of("reduce_axes_f32", &args(4, 9)).is_err());
    }
}

//! Plans for `kernels-cuda/elementwise.cu`: one grid-stride launch over the outputs.

use super::{Call, Plan, grid_stride};
use gpukit_core::Result;

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[];

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    let items = match c.op {
        // out, a, b, n
        "add" | "sub" | "mul" | "div" | "pow" => c.count(3)?,
        // out, a, b, dims, astr, bstr, ndim, n_out
        "add_bc" | "sub_bc" | "mul_bc" | "div_bc" | "pow_bc" => c.count(7)?,
        // out, a, n
        _ => c.count(2)?,
    };
    Ok(grid_stride(c.entry(), items, c.all_args()))
}

#[cfg(test)]
mod tests {
    use super::super::testing::buf;
    use super::super::{BLOCK_1D, MAX_GRID_1D, PlanArg, plan};
    use gpukit_core::{DType, KernelArg};

    fn unary_args(n: i64, dtype: DType) -> Vec<KernelArg> {
        vec![buf(1 << 24, dtype), buf(2 << 24, dtype), KernelArg::I64(n)]
    }

    #[test]
    fn unary_maps_are_one_grid_stride_launch_over_n() {
        for op in [
            "relu", "sigmoid", "exp", "tanh", "sqrt", "log", "abs", "neg", "rsqrt", "silu",
            "softplus", "sin", "cos",
        ] {
            for (sfx, dt) in [
                ("f32", DType::F32),
                ("f64", DType::F64),
                ("f16", DType::F16),
                ("bf16", DType::BF16),
            ] {
                let name = format!("{op}_{sfx}");
                let args = unary_args(1000, dt);
                let p = plan(&name, &args).unwrap();
                assert_eq!(p.scratch_bytes, 0);
                assert_eq!(p.steps.len(), 1, "{p:?}");
                let s = &p.steps[0];
                assert_eq!(s.entry, name);
                // 1000 / 256 = 3.9 -> 4 blocks of 256 threads.
                assert_eq!(s.cfg.grid.x, 4);
                assert_eq!(s.cfg.block.x, BLOCK_1D);
                assert_eq!(s.cfg.block.x, 256);
                assert_eq!(s.cfg.shared_bytes, 0);
                let want: Vec<PlanArg> = args.iter().map(|a| PlanArg::Arg(*a)).collect();
                assert_eq!(s.args, want);
            }
        }
    }

    #[test]
    fn unary_maps_cap_the_grid_and_skip_empty_calls() {
        let p = plan("exp_f32", &unary_args(1 << 40, DType::F32)).unwrap();
        assert_eq!(p.steps[0].cfg.grid.x, MAX_GRID_1D);
        assert_eq!(p.steps[0].cfg.grid.x, 65_535);
        let p = plan("tanh_bf16", &unary_args(0, DType::BF16)).unwrap();
        assert_eq!(p.scratch_bytes, 0);
        assert!(p.steps.is_empty());
    }
}

//! Plans for `kernels-cuda/norm.cu`: batch norm, layer norm and the activations of the
//! `norm` group (softmax_axis, argmax and reduce_l2 live in `reduce.cu`).
//!
//! * `batch_norm`: one 1-D grid-stride launch over the `n * c * s` elements.
//! * `layer_norm`: one warp per row, [`LN_WARPS`] warps per block, grid-stride over
//!   rows (the warp runs the reduction shape over its row twice, then writes it).
//! * `leaky_relu`, `clip`, `erf`, `gelu`, `gelu_tanh`: one 1-D grid-stride launch over
//!   `len` elements.
//!
//! Every call passes the ABI arguments through unchanged; no scratch, no auxiliary
//! entries.

use super::{BLOCK_1D, Call, MAX_GRID_1D, Plan, Step, grid_stride};
use gpukit_core::{Dim3, LaunchConfig, Result};

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[];

/// Warps (rows in flight) per block of `layer_norm`: the kernel's `NORM_BLOCK / 32`.
const LN_WARPS: u32 = BLOCK_1D / 32;

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    match c.op {
        // out, x, scale, bias, mean, var, n, c, s, eps
        "batch_norm" => {
            let (n, ch, s) = (c.count(6)?, c.count(7)?, c.count(8)?);
            // The kernel indexes elements with i64: the product must fit.
            let total = if n == 0 || ch == 0 || s == 0 {
                0
            } else {
                n.checked_mul(ch)
                    .and_then(|p| p.checked_mul(s))
                    .filter(|&t| t <= i64::MAX as u64)
                    .ok_or_else(|| c.bad(8, "n * c * s within i64"))?
            };
            Ok(grid_stride(c.entry(), total, c.all_args()))
        }
        // out, x, scale, bias, rows, n, eps
        "layer_norm" => {
            let (rows, n) = (c.count(4)?, c.count(5)?);
            if rows == 0 || n == 0 {
                return Ok(Plan::default());
            }
            let blocks = rows.div_ceil(LN_WARPS as u64).min(MAX_GRID_1D as u64) as u32;
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
        // out, x, len[, alpha | lo, hi]: leaky_relu, clip, erf, gelu, gelu_tanh
        _ => Ok(grid_stride(c.entry(), c.count(2)?, c.all_args())),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PlanArg, plan};
    use super::*;
    use gpukit_core::{DType, Error, KernelArg};

    fn buf(p: u64) -> KernelArg {
        crate::plan::testing::buf(p, DType::F32)
    }

    fn bn_args(n: i64, c: i64, s: i64) -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = (1..=6).map(|p| buf(p << 24)).collect();
        a.extend([
            KernelArg::I64(n),
            KernelArg::I64(c),
            KernelArg::I64(s),
            KernelArg::F64(1e-5),
        ]);
        a
    }

    fn ln_args(rows: i64, n: i64) -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = (1..=4).map(|p| buf(p << 24)).collect();
        a.extend([
            KernelArg::I64(rows),
            KernelArg::I64(n),
            KernelArg::F64(1e-5),
        ]);
        a
    }

    fn one_step(p: &Plan) -> &Step {
        assert_eq!(p.scratch_bytes, 0);
        assert_eq!(p.steps.len(), 1, "{p:?}");
        &p.steps[0]
    }

    #[test]
    fn batch_norm_is_one_grid_stride_launch_over_every_element() {
        let args = bn_args(2, 3, 1000);
        let p = plan("batch_norm_bf16", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "batch_norm_bf16");
        // 6000 elements / 256 threads = 23.4 -> 24 blocks.
        assert_eq!(s.cfg.grid, Dim3::x(24));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.cfg.shared_bytes, 0);
        let want: Vec<PlanArg> = args.iter().map(|a| PlanArg::Arg(*a)).collect();
        assert_eq!(s.args, want);
        // Huge tensors cap the grid; the kernel strides.
        let p = plan("batch_norm_f32", &bn_args(1 << 20, 64, 1 << 10)).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(65_535));
    }

    #[test]
    fn batch_norm_with_any_zero_size_launches_nothing() {
        for (n, c, s) in [(0, 3, 4), (2, 0, 4), (2, 3, 0)] {
            let p = plan("batch_norm_f64", &bn_args(n, c, s)).unwrap();
            assert_eq!(p, Plan::default(), "{n} {c} {s}");
        }
    }

    #[test]
    fn batch_norm_rejects_bad_sizes() {
        assert!(matches!(
            plan("batch_norm_f32", &bn_args(-1, 3, 4)),
            Err(Error::Argument { index: 6, .. })
        ));
        assert!(matches!(
            plan("batch_norm_f32", &bn_args(1 << 40, 1 << 20, 1 << 10)),
            Err(Error::Argument { index: 8, .. })
        ));
        let mut a = bn_args(1, 1, 1);
        a[8] = KernelArg::F64(1.0);
        assert!(matches!(
            plan("batch_norm_f32", &a),
            Err(Error::Argument { index: 8, .. })
        ));
    }

    #[test]
    fn layer_norm_is_one_warp_per_row() {
        let args = ln_args(100, 768);
        let p = plan("layer_norm_f16", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "layer_norm_f16");
        // 8 warps (rows) per 256-thread block: 100 rows -> 13 blocks.
        assert_eq!(s.cfg.grid, Dim3::x(13));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.cfg.shared_bytes, 0);
        let want: Vec<PlanArg> = args.iter().map(|a| PlanArg::Arg(*a)).collect();
        assert_eq!(s.args, want);
        // One row: one block. A long row changes nothing (the warp folds it in chunks).
        let p = plan("layer_norm_f32", &ln_args(1, 1 << 20)).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(1));
        // Many rows cap the grid.
        let p = plan("layer_norm_f64", &ln_args(1 << 30, 4)).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(65_535));
    }

    #[test]
    fn layer_norm_with_no_rows_or_empty_rows_launches_nothing() {
        assert_eq!(
            plan("layer_norm_f32", &ln_args(0, 8)).unwrap(),
            Plan::default()
        );
        assert_eq!(
            plan("layer_norm_f32", &ln_args(8, 0)).unwrap(),
            Plan::default()
        );
        assert!(matches!(
            plan("layer_norm_f32", &ln_args(3, -2)),
            Err(Error::Argument { index: 5, .. })
        ));
    }

    #[test]
    fn activations_are_one_grid_stride_launch() {
        let x = [buf(1 << 24), buf(2 << 24)];
        let cases: [(&str, Vec<KernelArg>); 5] = [
            (
                "leaky_relu_f32",
                vec![KernelArg::I64(1000), KernelArg::F64(0.01)],
            ),
            (
                "clip_f16",
                vec![
                    KernelArg::I64(1000),
                    KernelArg::F64(-1.0),
                    KernelArg::F64(1.0),
                ],
            ),
            ("erf_f64", vec![KernelArg::I64(1000)]),
            ("gelu_bf16", vec![KernelArg::I64(1000)]),
            ("gelu_tanh_f32", vec![KernelArg::I64(1000)]),
        ];
        for (name, tail) in cases {
            let mut args = x.to_vec();
            args.extend(tail.iter().copied());
            let p = plan(name, &args).unwrap();
            let s = one_step(&p);
            assert_eq!(s.entry, name);
            // 1000 / 256 -> 4 blocks.
            assert_eq!(s.cfg.grid, Dim3::x(4), "{name}");
            assert_eq!(s.cfg.block, Dim3::x(256));
            assert_eq!(s.args.len(), args.len());
            args[2] = KernelArg::I64(0);
            assert_eq!(plan(name, &args).unwrap(), Plan::default(), "{name}");
        }
    }

    /// The committed PTX has every entry these plans launch, with the ABI's parameter
    /// list: a buffer or an i64 is a 64-bit integer, an `f64` scalar an `.f64`.
    #[test]
    fn committed_ptx_entries_match_the_abi() {
        let ptx = crate::ptx::MODULES
            .iter()
            .find(|(f, _)| *f == "norm")
            .unwrap()
            .1;
        let entries = crate::ptx::entries(ptx);
        let ops = [
            "batch_norm",
            "layer_norm",
            "leaky_relu",
            "clip",
            "erf",
            "gelu",
            "gelu_tanh",
        ];
        for op in ops {
            let sig = gpukit_core::abi::signature(op).unwrap();
            let want: Vec<&str> = sig
                .args
                .split(',')
                .map(|a| if a.contains(": f64") { "f64" } else { "u64" })
                .collect();
            for &d in sig.dtypes {
                let name = gpukit_core::abi::kernel_name(op, d);
                let e = entries
                    .iter()
                    .find(|e| e.name == name)
                    .unwrap_or_else(|| panic!("{name} missing from norm.ptx"));
                assert_eq!(e.params, want, "{name}");
            }
        }
        // Nothing else: the reduce.cu ops are not here.
        assert_eq!(entries.len(), ops.len() * 4);
    }
}

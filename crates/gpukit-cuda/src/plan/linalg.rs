//! Plans for `kernels-cuda/linalg.cu`: `bmm` and `gemm`.
//!
//! Both are one launch of a shared-memory tiled product: [`MM_THREADS`] threads per
//! block, one block per `BM × BN` output tile (x: column tiles, y: row tiles, z: the
//! batch), each grid axis capped at the hardware limit (the kernel strides over the
//! rest). Two tile sizes per compute type ([`tile`]): the big one for products that
//! fill the device with big tiles, the small one (the `{op}_small` auxiliary entries,
//! same arguments) otherwise. Every output is one fma chain over `t` ascending either
//! way: the tile size changes the geometry, never the bits.
//!
//! The ABI arguments are passed through unchanged; no scratch.

use super::{Call, Plan, PlanArg, Step};
use gpukit_core::{DType, Dim3, LaunchConfig, Result};

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[("bmm_small", "bmm"), ("gemm_small", "gemm")];

/// Threads per block of the tiled kernels (`GK_MM_THREADS`).
pub(super) const MM_THREADS: u32 = 256;

/// Largest grid extent along y and z.
const MAX_GRID_YZ: u64 = 65_535;

/// Largest grid extent along x.
const MAX_GRID_X: u64 = (1 << 31) - 1;

/// Use the big tile only when it gives at least this many blocks (about two per SM of
/// a large current GPU); below that the small tile's 4× more blocks keep more of the
/// device busy.
const BIG_MIN_BLOCKS: u64 = 256;

/// The output tile `(rows, cols)` of the kernels' `GkMmCfg<R, big>`.
pub(super) fn tile(dtype: DType, big: bool) -> (u64, u64) {
    match (dtype == DType::F64, big) {
        (false, true) => (128, 64),
        (false, false) => (64, 64),
        (true, true) => (64, 64),
        (true, false) => (32, 32),
    }
}

/// One launch of `entry` over `batch` products of `m × n` outputs in `(tm, tn)` tiles.
pub(super) fn tiled_step(
    entry: String,
    (tm, tn): (u64, u64),
    (batch, m, n): (u64, u64, u64),
    args: Vec<PlanArg>,
) -> Step {
    let gx = n.div_ceil(tn).min(MAX_GRID_X) as u32;
    let gy = m.div_ceil(tm).min(MAX_GRID_YZ) as u32;
    let gz = batch.min(MAX_GRID_YZ) as u32;
    Step {
        entry,
        cfg: LaunchConfig {
            grid: Dim3::new(gx, gy, gz),
            block: Dim3::x(MM_THREADS),
            shared_bytes: 0,
        },
        args,
    }
}

/// Whether `batch` products of `m × n` take the big tile.
fn use_big(dtype: DType, batch: u64, m: u64, n: u64) -> bool {
    let (tm, tn) = tile(dtype, true);
    let blocks = m
        .div_ceil(tm)
        .saturating_mul(n.div_ceil(tn))
        .saturating_mul(batch);
    m >= tm && n >= tn && blocks >= BIG_MIN_BLOCKS
}

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    let (batch, m, n) = match c.op {
        // c, a, b, batch, m, k, n, a_bstride, b_bstride
        "bmm" => (c.count(3)?, c.count(4)?, c.count(6)?),
        // y, a, b, c, bias, m, k, n, trans_b, has_c, has_bias, alpha, beta, trans_a,
        // c_rs, c_cs
        _ => (1, c.count(5)?, c.count(7)?),
    };
    // k only has to be a count: k = 0 still writes +0.0 (+ epilogue) everywhere.
    c.count(if c.op == "bmm" { 5 } else { 6 })?;
    if batch == 0 || m == 0 || n == 0 {
        return Ok(Plan::default());
    }
    let big = use_big(c.dtype, batch, m, n);
    let entry = if big {
        c.entry()
    } else {
        c.aux(&format!("{}_small", c.op))
    };
    Ok(Plan {
        scratch_bytes: 0,
        steps: vec![tiled_step(
            entry,
            tile(c.dtype, big),
            (batch, m, n),
            c.all_args(),
        )],
    })
}

#[cfg(test)]
mod tests {
    use super::super::plan;
    use super::*;
    use gpukit_core::KernelArg;

    fn buf(p: u64) -> KernelArg {
        crate::plan::testing::buf(p, DType::F32)
    }

    fn bmm_args(batch: i64, m: i64, k: i64, n: i64) -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = (1..=3).map(|p| buf(p << 24)).collect();
        a.extend([batch, m, k, n, m * k, k * n].map(KernelArg::I64));
        a
    }

    fn gemm_args(m: i64, k: i64, n: i64) -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = (1..=5).map(|p| buf(p << 24)).collect();
        a.extend([m, k, n, 1, 1, 1].map(KernelArg::I64));
        a.extend([KernelArg::F64(0.5), KernelArg::F64(2.0)]);
        a.extend([0, n, 1].map(KernelArg::I64));
        a
    }

    fn one_step(p: &Plan) -> &Step {
        assert_eq!(p.scratch_bytes, 0);
        assert_eq!(p.steps.len(), 1, "{p:?}");
        &p.steps[0]
    }

    #[test]
    fn big_products_take_the_big_tile() {
        // 2048² f32: 128 × 64 tiles, 32 column tiles × 16 row tiles.
        let args = gemm_args(2048, 300, 2048);
        let p = plan("gemm_f32", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "gemm_f32");
        assert_eq!(s.cfg.grid, Dim3::new(32, 16, 1));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.cfg.shared_bytes, 0);
        let want: Vec<PlanArg> = args.iter().map(|a| PlanArg::Arg(*a)).collect();
        assert_eq!(s.args, want);
        // bmm 8 × 1000 × 700 bf16: 11 column tiles × 8 row tiles × 8 = 704 blocks.
        let p = plan("bmm_bf16", &bmm_args(8, 1000, 5, 700)).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "bmm_bf16");
        assert_eq!(s.cfg.grid, Dim3::new(11, 8, 8));
        // f64: the big tile is 64.
        let p = plan("bmm_f64", &bmm_args(4, 512, 5, 520)).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "bmm_f64");
        assert_eq!(s.cfg.grid, Dim3::new(9, 8, 4));
    }

    #[test]
    fn small_products_take_the_small_tile() {
        // 512 × 1024 f32 gives only 64 big tiles: small tiles of 64, 16 × 8.
        let p = plan("gemm_f32", &gemm_args(512, 1024, 1024)).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "gemm_small_f32");
        assert_eq!(s.cfg.grid, Dim3::new(16, 8, 1));
        // Many heads of 64 × 64 (m below the big tile's 128): small, one block per head.
        let p = plan("bmm_f16", &bmm_args(1000, 64, 64, 64)).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "bmm_small_f16");
        assert_eq!(s.cfg.grid, Dim3::new(1, 1, 1000));
        // The f64 small tile is 32: m = 33 -> 2 row tiles, n = 100 -> 4 column tiles.
        let p = plan("bmm_f64", &bmm_args(1, 33, 7, 100)).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "bmm_small_f64");
        assert_eq!(s.cfg.grid, Dim3::new(4, 2, 1));
        assert_eq!(s.cfg.block, Dim3::x(256));
    }

    #[test]
    fn grids_are_capped_and_the_kernel_strides() {
        let p = plan("bmm_f32", &bmm_args(100_000, 1, 1, 1)).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::new(1, 1, 65_535));
        let p = plan("gemm_f32", &gemm_args(10_000_000, 1, 8)).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::new(1, 65_535, 1));
    }

    #[test]
    fn empty_outputs_launch_nothing_but_k_zero_launches() {
        for (b, m, n) in [(0, 4, 4), (2, 0, 4), (2, 4, 0)] {
            assert_eq!(
                plan("bmm_f32", &bmm_args(b, m, 3, n)).unwrap(),
                Plan::default()
            );
        }
        for (m, n) in [(0, 4), (4, 0)] {
            assert_eq!(
                plan("gemm_f64", &gemm_args(m, 3, n)).unwrap(),
                Plan::default()
            );
        }
        // k = 0 writes alpha·(+0.0) + ...: one launch.
        let p = plan("gemm_f32", &gemm_args(3, 0, 5)).unwrap();
        assert_eq!(one_step(&p).entry, "gemm_small_f32");
        let p = plan("bmm_f32", &bmm_args(1, 3, 0, 5)).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::new(1, 1, 1));
    }

    #[test]
    fn negative_sizes_are_argument_errors() {
        assert!(plan("bmm_f32", &bmm_args(1, -1, 1, 1)).is_err());
        assert!(plan("gemm_f32", &gemm_args(1, -2, 1)).is_err());
    }

    #[test]
    fn committed_ptx_entries_match_the_abi() {
        let ptx = crate::ptx::MODULES
            .iter()
            .find(|(f, _)| *f == "linalg")
            .unwrap()
            .1;
        let entries = crate::ptx::entries(ptx);
        for (op, aux) in [("bmm", "bmm_small"), ("gemm", "gemm_small")] {
            let sig = gpukit_core::abi::signature(op).unwrap();
            let want: Vec<&str> = sig
                .args
                .split(',')
                .map(|a| if a.contains(": f64") { "f64" } else { "u64" })
                .collect();
            for &d in sig.dtypes {
                for name in [
                    gpukit_core::abi::kernel_name(op, d),
                    gpukit_core::abi::kernel_name(aux, d),
                ] {
                    let e = entries
                        .iter()
                        .find(|e| e.name == name)
                        .unwrap_or_else(|| panic!("{name} missing from linalg.ptx"));
                    assert_eq!(e.params, want, "{name}");
                }
            }
        }
        assert_eq!(entries.len(), 16);
    }
}

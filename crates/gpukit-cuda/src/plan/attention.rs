//! Plans for `kernels-cuda/attention.cu`.
//!
//! * `attention` (fused): [`THREADS`] threads (8 warps) per block, one block per
//!   (sequence·head, tile of [`fused_rows`] query rows), grid-stride over those tasks
//!   (at most [`MAX_GRID_1D`] blocks). Each warp owns 2 query rows (f32, f16, bf16) or 1
//!   (f64) for the whole walk over the 64-key tiles; K and V rows of the kept keys are
//!   staged in static shared memory.
//! * `attention_scores`: [`THREADS`] threads per block, one block per tile of
//!   [`SCORE_ROWS`] query rows × [`SCORE_KEYS`] keys of one head, grid-stride over tiles.
//!
//! Both pass the ABI arguments through unchanged; no scratch, no dynamic shared memory,
//! no auxiliary entries. The plan checks the arguments the kernels index with (head
//! width, `hpb`, flags) so that a bad call is an error, never an out-of-bounds access.

use super::{Call, MAX_GRID_1D, Plan, Step};
use gpukit_core::abi::attention::MAX_HEAD_DIM;
use gpukit_core::{DType, Dim3, LaunchConfig, Result};

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[];

/// Threads per block of both kernels (`ATTENTION_THREADS`, the `__launch_bounds__`).
const THREADS: u32 = 256;

/// Query rows per block of the scores kernel (`ATTENTION_SC_ROWS`).
const SCORE_ROWS: u64 = 32;

/// Keys per block of the scores kernel (`ATTENTION_SC_KEYS`).
const SCORE_KEYS: u64 = 64;

/// Query rows per block of the fused kernel: 8 warps × `AttentionCfg<T>::RW` rows.
fn fused_rows(d: DType) -> u64 {
    if d == DType::F64 { 8 } else { 16 }
}

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    if c.op == "attention" {
        fused(c)
    } else {
        scores(c)
    }
}

/// Argument `i` as a 0/1 flag.
fn flag(c: &Call<'_>, i: usize) -> Result<bool> {
    match c.i64(i)? {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(c.bad(i, "0 or 1")),
    }
}

/// Checks `hpb` (argument `i`) divides `heads`.
fn check_hpb(c: &Call<'_>, i: usize, heads: u64) -> Result<()> {
    let hpb = c.count(i)?;
    if hpb == 0 || !heads.is_multiple_of(hpb) {
        return Err(c.bad(i, "a heads-per-mask-row count >= 1 dividing heads"));
    }
    Ok(())
}

/// `a * b * ...`, or the error naming argument `i` when it leaves i64.
fn product(c: &Call<'_>, i: usize, xs: &[u64]) -> Result<u64> {
    xs.iter()
        .try_fold(1u64, |p, &x| p.checked_mul(x))
        .filter(|&p| p <= i64::MAX as u64)
        .ok_or_else(|| c.bad(i, "sizes whose product fits in i64"))
}

/// One launch of `tasks` blocks (capped; the kernels stride over the rest).
fn blocks(c: &Call<'_>, tasks: u64) -> Plan {
    if tasks == 0 {
        return Plan::default();
    }
    Plan {
        scratch_bytes: 0,
        steps: vec![Step {
            entry: c.entry(),
            cfg: LaunchConfig {
                grid: Dim3::x(tasks.min(MAX_GRID_1D as u64) as u32),
                block: Dim3::x(THREADS),
                shared_bytes: 0,
            },
            args: c.all_args(),
        }],
    }
}

// o, q, k, v, mask, has_mask, batch, heads, n, nkv, hd, hpb, interleaved, scale
fn fused(c: &Call<'_>) -> Result<Plan> {
    flag(c, 5)?;
    let (batch, heads, n, nkv, hd) = (
        c.count(6)?,
        c.count(7)?,
        c.count(8)?,
        c.count(9)?,
        c.count(10)?,
    );
    if !(1..=MAX_HEAD_DIM as u64).contains(&hd) {
        return Err(c.bad(10, "a head width in 1..=256"));
    }
    check_hpb(c, 11, heads)?;
    flag(c, 12)?;
    // The kernel's 64-bit offsets: q/o and k/v element counts must fit.
    product(c, 8, &[batch, heads, n, hd])?;
    product(c, 9, &[batch, heads, nkv, hd])?;
    let tasks = product(c, 8, &[batch, heads, n.div_ceil(fused_rows(c.dtype))])?;
    Ok(blocks(c, tasks))
}

// s, q, k, mask, has_mask, heads, n, nkv, hd, hpb, scale
fn scores(c: &Call<'_>) -> Result<Plan> {
    flag(c, 4)?;
    let (heads, n, nkv, hd) = (c.count(5)?, c.count(6)?, c.count(7)?, c.count(8)?);
    check_hpb(c, 9, heads)?;
    product(c, 7, &[heads, n, nkv])?;
    product(c, 8, &[heads, n, hd])?;
    product(c, 8, &[heads, nkv, hd])?;
    let tasks = product(
        c,
        7,
        &[heads, n.div_ceil(SCORE_ROWS), nkv.div_ceil(SCORE_KEYS)],
    )?;
    Ok(blocks(c, tasks))
}

#[cfg(test)]
mod tests {
    use super::super::{PlanArg, plan};
    use super::*;
    use gpukit_core::{Error, KernelArg};

    fn buf(p: u64) -> KernelArg {
        crate::plan::testing::buf(p, DType::F32)
    }

    /// Fused args: (has_mask, batch, heads, n, nkv, hd, hpb, interleaved).
    fn fused_args(x: [i64; 8]) -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = (1..=5).map(|p| buf(p << 24)).collect();
        a.extend(x.map(KernelArg::I64));
        a.push(KernelArg::F64(0.125));
        a
    }

    /// Scores args: (has_mask, heads, n, nkv, hd, hpb).
    fn score_args(x: [i64; 6]) -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = (1..=4).map(|p| buf(p << 24)).collect();
        a.extend(x.map(KernelArg::I64));
        a.push(KernelArg::F64(0.5));
        a
    }

    fn one_step(p: &Plan) -> &Step {
        assert_eq!(p.scratch_bytes, 0);
        assert_eq!(p.steps.len(), 1, "{p:?}");
        &p.steps[0]
    }

    fn passthrough(args: &[KernelArg]) -> Vec<PlanArg> {
        args.iter().map(|a| PlanArg::Arg(*a)).collect()
    }

    #[test]
    fn fused_is_one_block_per_head_and_row_tile() {
        // batch 2, heads 3, n 100, nkv 70, hd 64, masked with hpb 3, interleaved.
        let args = fused_args([1, 2, 3, 100, 70, 64, 3, 1]);
        let p = plan("attention_f32", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "attention_f32");
        // 6 (sequence, head) pairs x ceil(100 / 16) = 7 row tiles.
        assert_eq!(s.cfg.grid, Dim3::x(42));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.cfg.shared_bytes, 0);
        assert_eq!(s.args, passthrough(&args));
        // f64 blocks hold 8 rows: 6 x ceil(100 / 8) = 78.
        let p = plan("attention_f64", &args).unwrap();
        assert_eq!(one_step(&p).entry, "attention_f64");
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(78));
        // f16 and bf16 as f32.
        for d in ["f16", "bf16"] {
            let p = plan(&format!("attention_{d}"), &args).unwrap();
            assert_eq!(one_step(&p).cfg.grid, Dim3::x(42));
        }
        // nkv = 0 still launches (every output is NaN), the widest head too.
        let p = plan("attention_f32", &fused_args([0, 1, 1, 17, 0, 256, 1, 0])).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(2));
        // Many tasks cap the grid; the kernel strides.
        let p = plan("attention_f32", &fused_args([0, 1, 4096, 4096, 1, 8, 1, 0])).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(65_535));
    }

    #[test]
    fn fused_with_nothing_to_do_launches_nothing() {
        for (batch, heads, n) in [(0, 3, 5), (2, 0, 5), (2, 3, 0)] {
            let p = plan(
                "attention_bf16",
                &fused_args([0, batch, heads, n, 9, 4, 1, 0]),
            )
            .unwrap();
            assert_eq!(p, Plan::default(), "{batch} {heads} {n}");
        }
    }

    #[test]
    fn fused_rejects_what_the_kernel_cannot_index() {
        let bad = |x: [i64; 8], index: usize| match plan("attention_f32", &fused_args(x)) {
            Err(Error::Argument { index: i, .. }) => assert_eq!(i, index, "{x:?}"),
            other => panic!("{x:?}: {other:?}"),
        };
        bad([0, 1, 2, 3, 4, 0, 1, 0], 10); // head width 0
        bad([0, 1, 2, 3, 4, 257, 1, 0], 10); // head width above 256
        bad([1, 1, 4, 3, 4, 8, 3, 0], 11); // hpb not dividing heads
        bad([1, 1, 4, 3, 4, 8, 0, 0], 11); // hpb 0
        bad([2, 1, 4, 3, 4, 8, 1, 0], 5); // has_mask not a flag
        bad([0, 1, 4, 3, 4, 8, 1, -1], 12); // interleaved not a flag
        bad([0, 1 << 40, 1 << 20, 1 << 10, 4, 8, 1, 0], 8); // q elements past i64
    }

    #[test]
    fn scores_is_one_block_per_row_and_key_tile() {
        // heads 3, n 33, nkv 129, hd 1000 (any width), masked with hpb 1.
        let args = score_args([1, 3, 33, 129, 1000, 1]);
        let p = plan("attention_scores_f16", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "attention_scores_f16");
        // 3 heads x ceil(33 / 32) = 2 x ceil(129 / 64) = 3.
        assert_eq!(s.cfg.grid, Dim3::x(18));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.cfg.shared_bytes, 0);
        assert_eq!(s.args, passthrough(&args));
        // The same tiles for f64; hd = 0 still writes the (scaled, masked) zeros.
        let p = plan("attention_scores_f64", &score_args([0, 2, 32, 64, 0, 1])).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(2));
    }

    #[test]
    fn scores_with_nothing_to_do_launches_nothing() {
        for (heads, n, nkv) in [(0, 3, 5), (2, 0, 5), (2, 3, 0)] {
            let p = plan(
                "attention_scores_f32",
                &score_args([0, heads, n, nkv, 4, 1]),
            )
            .unwrap();
            assert_eq!(p, Plan::default(), "{heads} {n} {nkv}");
        }
        match plan("attention_scores_f32", &score_args([1, 4, 3, 4, 8, 3])) {
            Err(Error::Argument { index: 9, .. }) => {}
            other => panic!("{other:?}"),
        }
    }
}

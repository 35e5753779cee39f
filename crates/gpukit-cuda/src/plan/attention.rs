//! Plans for `kernels-cuda/attention.cu`.
//!
//! * `attention` (fused): [`THREADS`] threads (8 warps) per block, one block per
//!   (sequence·head, tile of [`fused_rows`] query rows), grid-stride over those tasks
//!   (at most [`MAX_GRID_1D`] blocks). Each warp owns 2 query rows (f32, f16, bf16) or 1
//!   (f64) for the whole walk over the 64-key tiles; K and V rows of the kept keys are
//!   staged in static shared memory.
//! * `attention_general`: the fused geometry (the same block, rows per warp and staging),
//!   one block per (sequence·query head, tile of [`fused_rows`] query rows); the keep
//!   decision is per (row, key), and the keys no row of the block keeps are not staged.
//! * `attention_scores`: [`THREADS`] threads per block, one block per tile of
//!   [`SCORE_ROWS`] query rows × [`SCORE_KEYS`] keys of one head, grid-stride over tiles.
//!
//! Both pass the ABI arguments through unchanged; no scratch, no dynamic shared memory,
//! no auxiliary entries. The plan checks the arguments the kernels index with (head
//! width, `hpb`, flags) so that a bad call is an error, never an out-of-bounds access.

use super::{Call, MAX_GRID_1D, Plan, Step};
use gpukit_core::abi::attention::{MAX_HEAD_DIM, MaskKind, general_spec_of};
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
    match c.op {
        "attention" => fused(c),
        "attention_general" => general(c),
        _ => scores(c),
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

// o, q, k, v, mask, mask_kind, causal, batch, heads, kv_heads, n, nkv, hd, vd,
// interleaved, msb, msh, msi, scale: the spec's rules (GeneralSpec::invalid), then the
// kernel's 64-bit offsets.
fn general(c: &Call<'_>) -> Result<Plan> {
    let mut s = [0u64; 18];
    for (i, x) in s.iter_mut().enumerate().skip(5) {
        *x = c.count(i)?;
    }
    let spec = general_spec_of(&s, 0.0).map_err(|(i, why)| c.bad(i, &why))?;
    if let Some(why) = spec.invalid() {
        return Err(c.bad(12, &why));
    }
    let (batch, heads, kvh, n, nkv, hd, vd) = (s[7], s[8], s[9], s[10], s[11], s[12], s[13]);
    product(c, 10, &[batch, heads, n, hd.max(vd)])?;
    product(c, 11, &[batch, kvh, nkv, hd.max(vd)])?;
    if spec.mask != MaskKind::None {
        let m = spec
            .mask_len()
            .ok_or_else(|| c.bad(15, "mask strides whose extent fits"))?;
        product(c, 15, &[m as u64])?;
    }
    let tasks = product(c, 10, &[batch, heads, n.div_ceil(fused_rows(c.dtype))])?;
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

    /// General args: (mask_kind, causal, batch, heads, kv_heads, n, nkv, hd, vd,
    /// interleaved, msb, msh, msi).
    fn general_args(x: [i64; 13]) -> Vec<KernelArg> {
        let mut a: Vec<KernelArg> = (1..=5).map(|p| buf(p << 24)).collect();
        a.extend(x.map(KernelArg::I64));
        a.push(KernelArg::F64(0.125));
        a
    }

    #[test]
    fn general_is_the_fused_geometry_over_query_heads() {
        // batch 2, heads 6 over 2 K/V heads, n 100, nkv 70, hd 64, vd 32, causal,
        // additive per-query mask [2, 1, 100, 70].
        let args = general_args([1, 1, 2, 6, 2, 100, 70, 64, 32, 0, 7000, 0, 70]);
        let p = plan("attention_general_f32", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "attention_general_f32");
        // 12 (sequence, query head) pairs x ceil(100 / 16) = 7 row tiles.
        assert_eq!(s.cfg.grid, Dim3::x(84));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.cfg.shared_bytes, 0);
        assert_eq!(s.args, passthrough(&args));
        let p = plan("attention_general_f64", &args).unwrap();
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(12 * 13));
        // Nothing to do: no launch.
        let p = plan(
            "attention_general_f16",
            &general_args([0, 0, 2, 6, 2, 0, 70, 64, 32, 0, 0, 0, 0]),
        )
        .unwrap();
        assert_eq!(p, Plan::default());
    }

    #[test]
    fn general_rejects_what_the_kernel_cannot_index() {
        let bad = |x: [i64; 13], index: usize| match plan("attention_general_f32", &general_args(x))
        {
            Err(Error::Argument { index: i, .. }) => assert_eq!(i, index, "{x:?}"),
            other => panic!("{x:?}: {other:?}"),
        };
        let ok = [0, 0, 1, 4, 2, 3, 5, 8, 8, 0, 0, 0, 0];
        assert!(plan("attention_general_f32", &general_args(ok)).is_ok());
        let with = |i: usize, v: i64| {
            let mut x = ok;
            x[i - 5] = v;
            x
        };
        bad(with(5, 3), 5); // mask kind outside 0..=2
        bad(with(6, 2), 6); // causal not a flag
        bad(with(14, 2), 14); // interleaved not a flag
        bad(with(12, 0), 12); // head width 0
        bad(with(13, 257), 12); // V width above 256
        bad(with(9, 3), 12); // kv_heads not dividing heads
        bad(with(9, 0), 12); // kv_heads 0
        bad(with(7, -1), 7); // a negative count
        bad(with(10, 1 << 60), 10); // q elements past i64
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

//! Plans for `kernels-cuda/movement.cu`: one launch per call, the ABI arguments passed
//! through unchanged, no scratch, no auxiliary entries.
//!
//! * `copy_axis`, `resize_bilinear`, `resize_nearest`: a grid-stride launch over the
//!   elements (the source's for `copy_axis`, the output's for the resizes), at most
//!   [`GRID_CAP`] blocks; a thread that walks several elements advances its
//!   coordinates with carries instead of dividing.
//! * `strided_copy`: the same geometry over the outputs; inside, each warp owns one
//!   contiguous range of outputs (32 consecutive per step), or, for a transpose, each
//!   block moves 32×32 tiles through shared memory (grid-stride over the tiles).
//! * `eos_gather`: one warp per (row, tile of [`EOS_TILE`] output columns), 8 warps
//!   per block, grid-stride over the work items.

use super::{Call, Plan, Step};
use gpukit_core::abi::movement::MAX_RANK;
use gpukit_core::{Dim3, LaunchConfig, Result};

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[];

/// Threads per block of every entry here (the kernels' `MV_BLOCK`).
const BLOCK: u32 = 256;

/// Most blocks of a grid-stride launch: about four times what an H100/H200 keeps
/// resident at 256 threads per block.
const GRID_CAP: u32 = 4096;

/// Output columns per `eos_gather` work item (the kernel's `MV_EOS_TILE`).
const EOS_TILE: u64 = 256;

/// Resize extents must keep `(2·out + 1)·in` below this (the tap arithmetic is exact
/// integers, converted exactly through f64), as the CPU kernel checks.
const TAP_LIMIT: u64 = 1 << 53;

/// One launch of `ceil(items / per_block)` blocks (at most [`GRID_CAP`]); none for no
/// items.
fn one_launch(c: &Call<'_>, items: u64, per_block: u64) -> Plan {
    if items == 0 {
        return Plan::default();
    }
    let blocks = items.div_ceil(per_block).min(GRID_CAP as u64) as u32;
    Plan {
        scratch_bytes: 0,
        steps: vec![Step {
            entry: c.entry(),
            cfg: LaunchConfig {
                grid: Dim3::x(blocks),
                block: Dim3::x(BLOCK),
                shared_bytes: 0,
            },
            args: c.all_args(),
        }],
    }
}

/// The product of the count arguments `idx`, which must fit in an i64 (the kernels
/// index with i64).
fn product(c: &Call<'_>, idx: &[usize]) -> Result<u64> {
    let mut p: u64 = 1;
    for &i in idx {
        let v = c.count(i)?;
        p = p
            .checked_mul(v)
            .filter(|&q| q <= i64::MAX as u64)
            .ok_or_else(|| c.bad(i, "extents whose product fits in i64"))?;
    }
    Ok(p)
}

/// The outputs of a resize (`out, x, planes, in_h, in_w, out_h, out_w, ..`), after the
/// checks the kernels rely on: a non-empty output needs a non-empty input, and the tap
/// arithmetic stays exact.
fn resize_outputs(c: &Call<'_>) -> Result<u64> {
    product(c, &[2, 3, 4])?;
    let n = product(c, &[2, 5, 6])?;
    if n == 0 {
        return Ok(0);
    }
    for (ii, oi) in [(3, 5), (4, 6)] {
        let (inp, out) = (c.count(ii)?, c.count(oi)?);
        if inp == 0 {
            return Err(c.bad(ii, "a non-empty input for a non-empty output"));
        }
        let big = out
            .checked_mul(2)
            .and_then(|v| v.checked_add(1))
            .and_then(|v| v.checked_mul(inp));
        if !matches!(big, Some(v) if v < TAP_LIMIT) {
            return Err(c.bad(oi, "resize extents with (2*out + 1)*in below 2^53"));
        }
    }
    Ok(n)
}

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    let block = BLOCK as u64;
    match c.op {
        // dst, src, outer, src_axis, inner, dst_axis, offset
        "copy_axis" => {
            product(c, &[2, 5, 4])?;
            let n = product(c, &[2, 3, 4])?;
            let (src_axis, dst_axis, offset) = (c.count(3)?, c.count(5)?, c.count(6)?);
            if offset.checked_add(src_axis).is_none_or(|e| e > dst_axis) {
                return Err(c.bad(6, "a slot inside the destination axis"));
            }
            Ok(one_launch(c, n, block))
        }
        // out, x, dims, strides, ndim, offset, n_out
        "strided_copy" => {
            let ndim = c.count(4)?;
            if ndim == 0 || ndim > MAX_RANK as u64 {
                return Err(c.bad(4, "ndim in 1..=8"));
            }
            c.count(5)?;
            Ok(one_launch(c, c.count(6)?, block))
        }
        // out, x, planes, in_h, in_w, out_h, out_w, align_corners
        "resize_bilinear" => {
            let n = resize_outputs(c)?;
            if !matches!(c.i64(7)?, 0 | 1) {
                return Err(c.bad(7, "align_corners 0 or 1"));
            }
            Ok(one_launch(c, n, block))
        }
        // out, x, planes, in_h, in_w, out_h, out_w
        "resize_nearest" => Ok(one_launch(c, resize_outputs(c)?, block)),
        // out, x, ids, batch, seq, d
        _ => {
            product(c, &[3, 4, 5])?;
            let (batch, seq, d) = (c.count(3)?, c.count(4)?, c.count(5)?);
            if batch == 0 || d == 0 {
                return Ok(Plan::default());
            }
            if seq == 0 {
                return Err(c.bad(4, "seq >= 1"));
            }
            let items = batch
                .checked_mul(d.div_ceil(EOS_TILE))
                .ok_or_else(|| c.bad(3, "batch * tiles within u64"))?;
            Ok(one_launch(c, items, block / 32))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PlanArg, plan};
    use super::*;
    use gpukit_core::{DType, Error, KernelArg};

    fn buf(p: u64, dtype: DType) -> KernelArg {
        crate::plan::testing::buf(p << 24, dtype)
    }

    fn with(bufs: &[KernelArg], scalars: &[i64]) -> Vec<KernelArg> {
        let mut a = bufs.to_vec();
        a.extend(scalars.iter().map(|&v| KernelArg::I64(v)));
        a
    }

    fn two(d: DType, scalars: &[i64]) -> Vec<KernelArg> {
        with(&[buf(1, d), buf(2, d)], scalars)
    }

    /// The plan's single step, checked to pass the arguments through with 256 threads
    /// per block; returns the grid size.
    fn one(name: &str, args: &[KernelArg]) -> u32 {
        let p = plan(name, args).unwrap();
        assert_eq!(p.scratch_bytes, 0, "{name}");
        assert_eq!(p.steps.len(), 1, "{name}: {p:?}");
        let s = &p.steps[0];
        assert_eq!(s.entry, name);
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.cfg.shared_bytes, 0);
        let want: Vec<PlanArg> = args.iter().map(|a| PlanArg::Arg(*a)).collect();
        assert_eq!(s.args, want);
        s.cfg.grid.x
    }

    fn nothing(name: &str, args: &[KernelArg]) {
        assert_eq!(
            plan(name, args).unwrap(),
            Plan::default(),
            "{name} {args:?}"
        );
    }

    #[test]
    fn copy_axis_covers_the_source_elements() {
        // 3 * 5 * 100 = 1500 source elements: 6 blocks.
        assert_eq!(
            one("copy_axis_bf16", &two(DType::BF16, &[3, 5, 100, 9, 4])),
            6
        );
        // 2^30 elements: capped.
        assert_eq!(
            one(
                "copy_axis_i64",
                &two(DType::I64, &[1 << 10, 1 << 10, 1 << 10, 1 << 10, 0])
            ),
            4096
        );
        nothing("copy_axis_f32", &two(DType::F32, &[3, 0, 100, 9, 9]));
        nothing("copy_axis_f32", &two(DType::F32, &[0, 5, 100, 9, 4]));
        // A slot past the end of the axis.
        let r = plan("copy_axis_f32", &two(DType::F32, &[3, 5, 100, 9, 5]));
        assert!(matches!(r, Err(Error::Argument { index: 6, .. })), "{r:?}");
    }

    fn strided(d: DType, ndim: i64, offset: i64, n_out: i64) -> Vec<KernelArg> {
        with(
            &[buf(1, d), buf(2, d), buf(3, DType::I64), buf(4, DType::I64)],
            &[ndim, offset, n_out],
        )
    }

    #[test]
    fn strided_copy_covers_the_outputs() {
        assert_eq!(one("strided_copy_f16", &strided(DType::F16, 3, 7, 1)), 1);
        // 69 * 69 = 4761 outputs: 19 blocks (each warp then owns 32 outputs).
        assert_eq!(
            one("strided_copy_i32", &strided(DType::I32, 2, 0, 69 * 69)),
            19
        );
        assert_eq!(
            one("strided_copy_f64", &strided(DType::F64, 8, 0, 1 << 40)),
            4096
        );
        nothing("strided_copy_f32", &strided(DType::F32, 4, 0, 0));
        for ndim in [0, 9, -1] {
            let r = plan("strided_copy_f32", &strided(DType::F32, ndim, 0, 10));
            assert!(matches!(r, Err(Error::Argument { index: 4, .. })), "{r:?}");
        }
    }

    #[test]
    fn resizes_cover_the_outputs() {
        // 6 planes of 17 x 33 = 3366 outputs: 14 blocks.
        assert_eq!(
            one(
                "resize_bilinear_f32",
                &two(DType::F32, &[6, 5, 9, 17, 33, 0])
            ),
            14
        );
        assert_eq!(
            one(
                "resize_bilinear_bf16",
                &two(DType::BF16, &[6, 5, 9, 17, 33, 1])
            ),
            14
        );
        assert_eq!(
            one("resize_nearest_i32", &two(DType::I32, &[6, 5, 9, 17, 33])),
            14
        );
        assert_eq!(
            one("resize_nearest_f64", &two(DType::F64, &[1, 1, 1, 1, 1])),
            1
        );
        // Empty outputs launch nothing, whatever the input.
        nothing(
            "resize_bilinear_f64",
            &two(DType::F64, &[0, 5, 9, 17, 33, 1]),
        );
        nothing(
            "resize_bilinear_f64",
            &two(DType::F64, &[2, 0, 0, 17, 0, 0]),
        );
        nothing("resize_nearest_f16", &two(DType::F16, &[2, 3, 3, 0, 5]));
        // An empty input for a non-empty output.
        let r = plan("resize_nearest_f16", &two(DType::F16, &[2, 3, 0, 4, 5]));
        assert!(matches!(r, Err(Error::Argument { index: 4, .. })), "{r:?}");
        // Tap arithmetic beyond 2^53.
        let r = plan(
            "resize_nearest_f32",
            &two(DType::F32, &[1, 1 << 27, 1, 1 << 26, 1]),
        );
        assert!(matches!(r, Err(Error::Argument { index: 5, .. })), "{r:?}");
        // align_corners must be 0 or 1; resize_bilinear is floats only.
        let r = plan("resize_bilinear_f32", &two(DType::F32, &[1, 2, 2, 3, 3, 2]));
        assert!(matches!(r, Err(Error::Argument { index: 7, .. })), "{r:?}");
        assert!(matches!(
            plan("resize_bilinear_i32", &two(DType::I32, &[1, 2, 2, 3, 3, 0])),
            Err(Error::KernelNotFound { .. })
        ));
    }

    fn eos(d: DType, batch: i64, seq: i64, dim: i64) -> Vec<KernelArg> {
        with(
            &[buf(1, d), buf(2, d), buf(3, DType::I64)],
            &[batch, seq, dim],
        )
    }

    #[test]
    fn eos_gather_is_a_warp_per_row_tile() {
        // 4 rows of 768 columns = 4 * 3 tiles = 12 warps: 2 blocks of 8 warps.
        assert_eq!(one("eos_gather_f16", &eos(DType::F16, 4, 77, 768)), 2);
        // One row, one column: one warp.
        assert_eq!(one("eos_gather_i64", &eos(DType::I64, 1, 1, 1)), 1);
        // Many rows: capped.
        assert_eq!(one("eos_gather_f32", &eos(DType::F32, 1 << 20, 2, 8)), 4096);
        nothing("eos_gather_f32", &eos(DType::F32, 0, 77, 768));
        nothing("eos_gather_f32", &eos(DType::F32, 4, 77, 0));
        let r = plan("eos_gather_bf16", &eos(DType::BF16, 4, 0, 768));
        assert!(matches!(r, Err(Error::Argument { index: 4, .. })), "{r:?}");
    }

    #[test]
    fn overflowing_extents_are_errors() {
        let r = plan(
            "copy_axis_f32",
            &two(DType::F32, &[1 << 40, 1, 1 << 30, 1, 0]),
        );
        assert!(matches!(r, Err(Error::Argument { .. })), "{r:?}");
        let r = plan("eos_gather_f32", &eos(DType::F32, 1 << 40, 1 << 30, 1));
        assert!(matches!(r, Err(Error::Argument { .. })), "{r:?}");
        let r = plan("resize_nearest_f32", &two(DType::F32, &[-1, 1, 1, 1, 1]));
        assert!(matches!(r, Err(Error::Argument { index: 2, .. })), "{r:?}");
    }

    #[test]
    fn every_planned_step_is_a_committed_entry_with_its_arguments() {
        let ptx = crate::ptx::MODULES
            .iter()
            .find(|(f, _)| *f == "movement")
            .unwrap()
            .1;
        let entries = crate::ptx::entries(ptx);
        let mut seen = std::collections::BTreeSet::new();
        let mut check = |name: String, args: Vec<KernelArg>| {
            for s in plan(&name, &args).unwrap().steps {
                let e = entries
                    .iter()
                    .find(|e| e.name == s.entry)
                    .unwrap_or_else(|| panic!("{} missing from movement.ptx", s.entry));
                assert_eq!(e.params, vec!["u64"; s.args.len()], "{}", s.entry);
                seen.insert(s.entry);
            }
        };
        for d in DType::ALL {
            let n = d.name();
            check(format!("copy_axis_{n}"), two(d, &[3, 5, 100, 9, 4]));
            check(format!("strided_copy_{n}"), strided(d, 3, 0, 10));
            check(format!("resize_nearest_{n}"), two(d, &[1, 2, 2, 3, 3]));
            check(format!("eos_gather_{n}"), eos(d, 2, 3, 4));
            if d.is_float() {
                check(format!("resize_bilinear_{n}"), two(d, &[1, 2, 2, 3, 3, 1]));
            }
        }
        // Every entry of the module is planned somewhere.
        assert_eq!(seen.len(), entries.len(), "{seen:?}");
    }
}

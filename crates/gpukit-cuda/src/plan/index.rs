//! Plans for `kernels-cuda/index.cu`: gather, scatter and the index check.
//!
//! * `gather`: one grid-stride launch over the `outer * nidx * inner` outputs
//!   ([`GRID_CAP`] blocks at most: each thread then walks several elements, advancing
//!   its coordinates with carries instead of dividing).
//! * `scatter`, column form (the default): one thread per `(o, i)` column, writing it
//!   for `g = 0..nidx` ascending, so the largest `g` wins as on the CPU. Winner form
//!   (few columns, many indices, a moderate axis; see [`use_winner`]): `scatter_fill`
//!   sets a table of `axis_len` i64 in scratch to -1, `scatter_mark` stores in it the
//!   largest `g` per target row (integer `atomicMax`: a maximum does not depend on the
//!   order, so the table is deterministic), and `scatter_win` writes every
//!   `(o, g, i)` whose `g` is its row's winner, in parallel. Both forms leave exactly
//!   the bits of the sequential definition.
//! * `check_index`: each block writes the first bad position of its grid-stride share
//!   (or -1); one block writes `result` directly, more write per-block partials to
//!   scratch and `check_index_fold` (one block) writes their minimum (as unsigned, so
//!   -1 means none). `n = 0` is still one launch: it writes -1.

use super::{Call, Plan, PlanArg, Step};
use gpukit_core::abi::kernel_name;
use gpukit_core::{DType, Dim3, LaunchConfig, Result};

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[
    ("scatter_win", "scatter"),
    ("scatter_fill", "check_index"),
    ("scatter_mark", "check_index"),
    ("check_index_fold", "check_index"),
];

/// Threads per block of every entry here (the kernels' `IX_BLOCK`).
const BLOCK: u32 = 256;

/// Most blocks of a grid-stride launch: about four times what an H100/H200 keeps
/// resident at 256 threads per block.
const GRID_CAP: u32 = 4096;

/// Most blocks of the index check (its partials stay a few KiB for the fold).
const CHECK_CAP: u32 = 1024;

/// The scatter winner form needs at least this many indices...
const WIN_MIN_NIDX: u64 = 32;
/// ...fewer `(o, i)` columns than this (more fill the GPU on their own)...
const WIN_MAX_COLS: u64 = 16_384;
/// ...and an axis of at most this many rows (its scratch table: 8 bytes per row).
const WIN_MAX_AXIS: u64 = 1 << 22;

/// A 1-D launch of `blocks` blocks.
fn step(entry: String, blocks: u32, args: Vec<PlanArg>) -> Step {
    Step {
        entry,
        cfg: LaunchConfig {
            grid: Dim3::x(blocks),
            block: Dim3::x(BLOCK),
            shared_bytes: 0,
        },
        args,
    }
}

/// Blocks for a grid-stride loop over `items` (at least 1, at most `cap`).
fn blocks_for(items: u64, cap: u32) -> u32 {
    items.div_ceil(BLOCK as u64).clamp(1, cap as u64) as u32
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

/// Whether a scatter with these extents takes the winner form.
fn use_winner(cols: u64, axis_len: u64, nidx: u64) -> bool {
    nidx >= WIN_MIN_NIDX && cols < WIN_MAX_COLS && axis_len <= WIN_MAX_AXIS
}

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    match c.op {
        // out, data, idx, outer, axis_len, inner, nidx
        "gather" => {
            product(c, &[3, 4, 5])?;
            let n = product(c, &[3, 6, 5])?;
            if n == 0 {
                return Ok(Plan::default());
            }
            Ok(Plan {
                scratch_bytes: 0,
                steps: vec![step(c.entry(), blocks_for(n, GRID_CAP), c.all_args())],
            })
        }
        // y, idx, upd, outer, axis_len, inner, nidx
        "scatter" => {
            product(c, &[3, 4, 5])?;
            let n = product(c, &[3, 6, 5])?;
            if n == 0 {
                return Ok(Plan::default());
            }
            let cols = product(c, &[3, 5])?;
            let (axis_len, nidx) = (c.count(4)?, c.count(6)?);
            if !use_winner(cols, axis_len, nidx) {
                return Ok(Plan {
                    scratch_bytes: 0,
                    steps: vec![step(c.entry(), blocks_for(cols, GRID_CAP), c.all_args())],
                });
            }
            // axis_len >= 1 here (an index exists and is in range).
            let win = PlanArg::Scratch {
                offset: 0,
                bytes: axis_len as usize * 8,
            };
            let mut win_args = c.all_args();
            win_args.push(win);
            Ok(Plan {
                scratch_bytes: axis_len as usize * 8,
                steps: vec![
                    step(
                        kernel_name("scatter_fill", DType::I64),
                        blocks_for(axis_len, GRID_CAP),
                        vec![win, c.arg(4)?],
                    ),
                    step(
                        kernel_name("scatter_mark", DType::I64),
                        blocks_for(nidx, GRID_CAP),
                        vec![win, c.arg(1)?, c.arg(6)?, c.arg(4)?],
                    ),
                    step(c.aux("scatter_win"), blocks_for(n, GRID_CAP), win_args),
                ],
            })
        }
        // idx, n, axis_len, result
        _ => {
            let n = c.count(1)?;
            c.count(2)?;
            let blocks = blocks_for(n, CHECK_CAP);
            if blocks == 1 {
                return Ok(Plan {
                    scratch_bytes: 0,
                    steps: vec![step(
                        c.entry(),
                        1,
                        vec![c.arg(0)?, c.arg(1)?, c.arg(2)?, c.arg(3)?],
                    )],
                });
            }
            let parts = PlanArg::Scratch {
                offset: 0,
                bytes: blocks as usize * 8,
            };
            Ok(Plan {
                scratch_bytes: blocks as usize * 8,
                steps: vec![
                    step(
                        c.entry(),
                        blocks,
                        vec![c.arg(0)?, c.arg(1)?, c.arg(2)?, parts],
                    ),
                    step(
                        c.aux("check_index_fold"),
                        1,
                        vec![
                            c.arg(3)?,
                            parts,
                            PlanArg::Arg(gpukit_core::KernelArg::I64(blocks as i64)),
                        ],
                    ),
                ],
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan;
    use super::*;
    use gpukit_core::{Error, KernelArg};

    fn buf(p: u64, dtype: DType) -> KernelArg {
        crate::plan::testing::buf(p << 24, dtype)
    }

    fn i(v: i64) -> KernelArg {
        KernelArg::I64(v)
    }

    fn pass(args: &[KernelArg]) -> Vec<PlanArg> {
        args.iter().map(|a| PlanArg::Arg(*a)).collect()
    }

    /// gather / scatter arguments: three buffers, then outer, axis_len, inner, nidx.
    fn ix_args(op: &str, d: DType, outer: i64, axis: i64, inner: i64, nidx: i64) -> Vec<KernelArg> {
        let bufs = if op == "gather" {
            [buf(1, d), buf(2, d), buf(3, DType::I64)]
        } else {
            [buf(1, d), buf(3, DType::I64), buf(2, d)]
        };
        let mut a = bufs.to_vec();
        a.extend([i(outer), i(axis), i(inner), i(nidx)]);
        a
    }

    #[test]
    fn gather_is_one_grid_stride_launch_over_the_outputs() {
        let args = ix_args("gather", DType::F16, 3, 10, 7, 5);
        let p = plan("gather_f16", &args).unwrap();
        assert_eq!(p.scratch_bytes, 0);
        assert_eq!(p.steps.len(), 1);
        let s = &p.steps[0];
        assert_eq!(s.entry, "gather_f16");
        // 3 * 5 * 7 = 105 outputs: one block.
        assert_eq!(s.cfg.grid, Dim3::x(1));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.cfg.shared_bytes, 0);
        assert_eq!(s.args, pass(&args));
        // 1000 * 100 * 64 = 6.4M outputs: capped at 4096 blocks.
        let p = plan(
            "gather_i32",
            &ix_args("gather", DType::I32, 1000, 7, 64, 100),
        )
        .unwrap();
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(4096));
        // 2 * 3 * 300 = 1800 outputs: 8 blocks.
        let p = plan("gather_f64", &ix_args("gather", DType::F64, 2, 1, 300, 3)).unwrap();
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(8));
    }

    #[test]
    fn gather_and_scatter_with_nothing_to_move_launch_nothing() {
        for op in ["gather", "scatter"] {
            for (o, a, n, g) in [(0, 4, 5, 6), (2, 4, 0, 6), (2, 4, 5, 0), (0, 0, 0, 0)] {
                let name = format!("{op}_f32");
                let p = plan(&name, &ix_args(op, DType::F32, o, a, n, g)).unwrap();
                assert_eq!(p, Plan::default(), "{name} {o} {a} {n} {g}");
            }
        }
    }

    #[test]
    fn scatter_owns_columns_by_default() {
        // Few indices: the column form, one thread per (o, i) column.
        let args = ix_args("scatter", DType::BF16, 4, 9, 100, 31);
        let p = plan("scatter_bf16", &args).unwrap();
        assert_eq!(p.scratch_bytes, 0);
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.steps[0].entry, "scatter_bf16");
        // 400 columns: 2 blocks.
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(2));
        assert_eq!(p.steps[0].args, pass(&args));
        // Many columns: the column form too, whatever nidx.
        let p = plan(
            "scatter_f32",
            &ix_args("scatter", DType::F32, 1, 9, 16_384, 1000),
        )
        .unwrap();
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(64));
        // A huge axis: no 8-byte-per-row table, the column form.
        let p = plan(
            "scatter_i64",
            &ix_args("scatter", DType::I64, 1, (1 << 22) + 1, 1, 64),
        )
        .unwrap();
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.scratch_bytes, 0);
    }

    #[test]
    fn scatter_with_few_columns_and_many_indices_uses_the_winner_table() {
        let args = ix_args("scatter", DType::F64, 2, 1000, 3, 500);
        let p = plan("scatter_f64", &args).unwrap();
        assert_eq!(p.scratch_bytes, 8000);
        let win = PlanArg::Scratch {
            offset: 0,
            bytes: 8000,
        };
        let names: Vec<&str> = p.steps.iter().map(|s| s.entry.as_str()).collect();
        assert_eq!(
            names,
            ["scatter_fill_i64", "scatter_mark_i64", "scatter_win_f64"]
        );
        // fill: 1000 rows, 4 blocks; args win, axis_len.
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(4));
        assert_eq!(p.steps[0].args, vec![win, PlanArg::Arg(i(1000))]);
        // mark: 500 indices, 2 blocks; args win, idx, nidx, axis_len.
        assert_eq!(p.steps[1].cfg.grid, Dim3::x(2));
        assert_eq!(
            p.steps[1].args,
            vec![
                win,
                PlanArg::Arg(args[1]),
                PlanArg::Arg(i(500)),
                PlanArg::Arg(i(1000))
            ]
        );
        // win: 2 * 500 * 3 = 3000 updates, 12 blocks; the ABI args, then win.
        assert_eq!(p.steps[2].cfg.grid, Dim3::x(12));
        let mut want = pass(&args);
        want.push(win);
        assert_eq!(p.steps[2].args, want);
        for s in &p.steps {
            assert_eq!(s.cfg.block, Dim3::x(256));
            assert_eq!(s.cfg.shared_bytes, 0);
        }
    }

    fn check_args(n: i64, axis: i64) -> Vec<KernelArg> {
        vec![buf(1, DType::I64), i(n), i(axis), buf(2, DType::I64)]
    }

    #[test]
    fn small_index_checks_are_one_block_writing_the_result() {
        for n in [0, 1, 256] {
            let args = check_args(n, 5);
            let p = plan("check_index_i64", &args).unwrap();
            assert_eq!(p.scratch_bytes, 0);
            assert_eq!(p.steps.len(), 1, "n = {n}: even n = 0 writes -1");
            assert_eq!(p.steps[0].entry, "check_index_i64");
            assert_eq!(p.steps[0].cfg.grid, Dim3::x(1));
            assert_eq!(p.steps[0].args, pass(&args));
        }
    }

    #[test]
    fn large_index_checks_fold_per_block_partials() {
        let args = check_args(257, 5);
        let p = plan("check_index_i64", &args).unwrap();
        let parts = PlanArg::Scratch {
            offset: 0,
            bytes: 16,
        };
        assert_eq!(p.scratch_bytes, 16);
        assert_eq!(p.steps.len(), 2);
        assert_eq!(p.steps[0].entry, "check_index_i64");
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(2));
        assert_eq!(
            p.steps[0].args,
            vec![
                PlanArg::Arg(args[0]),
                PlanArg::Arg(i(257)),
                PlanArg::Arg(i(5)),
                parts
            ]
        );
        assert_eq!(p.steps[1].entry, "check_index_fold_i64");
        assert_eq!(p.steps[1].cfg.grid, Dim3::x(1));
        assert_eq!(p.steps[1].cfg.block, Dim3::x(256));
        assert_eq!(
            p.steps[1].args,
            vec![PlanArg::Arg(args[3]), parts, PlanArg::Arg(i(2))]
        );
        // A long index list: capped at 1024 blocks, 8 KiB of partials.
        let p = plan("check_index_i64", &check_args(10_000_000, 5)).unwrap();
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(1024));
        assert_eq!(p.scratch_bytes, 8192);
        assert_eq!(p.steps[1].args[2], PlanArg::Arg(i(1024)));
    }

    #[test]
    fn bad_arguments_are_errors() {
        // A negative extent.
        let r = plan("gather_f32", &ix_args("gather", DType::F32, -1, 4, 5, 6));
        assert!(matches!(r, Err(Error::Argument { index: 3, .. })), "{r:?}");
        // Extents whose product overflows i64.
        let r = plan(
            "scatter_f32",
            &ix_args("scatter", DType::F32, 1 << 40, 1, 1 << 30, 1),
        );
        assert!(matches!(r, Err(Error::Argument { .. })), "{r:?}");
        // A missing argument.
        let r = plan("check_index_i64", &check_args(3, 3)[..3]);
        assert!(matches!(r, Err(Error::Argument { index: 3, .. })), "{r:?}");
        // check_index exists for i64 only.
        assert!(matches!(
            plan("check_index_i32", &check_args(3, 3)),
            Err(Error::KernelNotFound { .. })
        ));
    }

    #[test]
    fn every_planned_step_is_a_committed_entry_with_its_arguments() {
        let ptx = crate::ptx::MODULES
            .iter()
            .find(|(f, _)| *f == "index")
            .unwrap()
            .1;
        let entries = crate::ptx::entries(ptx);
        let mut seen = std::collections::BTreeSet::new();
        let mut check = |name: &str, args: Vec<KernelArg>| {
            for s in plan(name, &args).unwrap().steps {
                let e = entries
                    .iter()
                    .find(|e| e.name == s.entry)
                    .unwrap_or_else(|| panic!("{} missing from index.ptx", s.entry));
                assert_eq!(e.params, vec!["u64"; s.args.len()], "{}", s.entry);
                seen.insert(s.entry);
            }
        };
        for d in DType::ALL {
            let n = d.name();
            check(&format!("gather_{n}"), ix_args("gather", d, 2, 3, 4, 5));
            check(&format!("scatter_{n}"), ix_args("scatter", d, 2, 3, 4, 5));
            check(&format!("scatter_{n}"), ix_args("scatter", d, 2, 3, 4, 500));
        }
        check("check_index_i64", check_args(10, 3));
        check("check_index_i64", check_args(1000, 3));
        // Every entry of the module is planned somewhere.
        assert_eq!(seen.len(), entries.len(), "{seen:?}");
    }
}

//! Plans for `kernels-cuda/reduce.cu`: sum, dot, row softmax, and the norm group's
//! softmax_axis, argmax and reduce_l2.
//!
//! * `sum`, `dot` with `n <= CHUNK` (one chunk, `n = 0` included): the main entry, one
//!   warp (a block of 32 threads), which runs the whole reduction shape and stores the
//!   chunk's result once.
//! * `sum`, `dot` with `n > CHUNK`: two launches. `{sum,dot}_chunks` (one warp per
//!   8192-item chunk, 8 warps per 256-thread block, grid-stride) writes each chunk's
//!   result in the compute type (4 bytes for f32/f16/bf16/i32, 8 for f64/i64) to scratch;
//!   then `sum_partials` (one warp; dot uses it too: the same combine `+` and store)
//!   folds them as `gpukit_core::reduce::combine_partials` does and stores the result.
//! * `softmax`, `argmax`, `reduce_l2` with rows of at most one chunk: one warp per row,
//!   8 rows in flight per 256-thread block, grid-stride over rows.
//! * The same with longer rows: a warp per (row, chunk) pair, chunk results in scratch,
//!   so a few long rows still fill the GPU. softmax: `softmax_pmax` (chunk maxima),
//!   `softmax_psum` (chunk sums of `exp(x - m)`), `softmax_pwrite` (the outputs, the
//!   row's sum folded from the chunk sums); argmax: `argmax_chunks` (chunk winners, i64),
//!   `argmax_finish` (a warp per row); reduce_l2: `reduce_l2_chunks` (chunk sums of
//!   squares), `reduce_l2_finish` (a warp per row: fold, sqrt, store).
//! * `softmax_axis`: `inner = 1` is the row softmax (main entry or the long-row
//!   launches); `inner >= 32` with `axis <= CHUNK` is `softmax_cols`, one thread per
//!   line `(o, i)` (a warp reads 32 adjacent lines, coalesced), the thread holding the
//!   shape's 32 lanes itself; otherwise the main entry, one warp per line.
//!
//! Zero-size calls launch nothing, except sum and dot, which always store their
//! result (`n = 0` stores zero) and reduce_l2, which stores `+0.0` for each of its
//! rows when `n = 0`.

use super::{BLOCK_1D, Call, MAX_GRID_1D, Plan, PlanArg, Step, grid_stride};
use gpukit_core::{DType, Dim3, KernelArg, LaunchConfig, Result};

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[
    ("sum_chunks", "sum"),
    ("sum_partials", "sum"),
    ("dot_chunks", "dot"),
    ("softmax_cols", "softmax_axis"),
    ("softmax_pmax", "softmax"),
    ("softmax_psum", "softmax"),
    ("softmax_pwrite", "softmax"),
    ("argmax_chunks", "argmax"),
    ("argmax_finish", "argmax"),
    ("reduce_l2_chunks", "reduce_l2"),
    ("reduce_l2_finish", "reduce_l2"),
];

/// Warps per block of the grid kernels (the kernels' `RED_BLOCK / 32`).
const WARPS: u32 = BLOCK_1D / 32;

/// Items per chunk of the reduction shape.
const CHUNK: u64 = gpukit_core::reduce::CHUNK as u64;

/// Bytes of one chunk result in the compute type of `d`.
fn acc_bytes(d: DType) -> u64 {
    match d {
        DType::F64 | DType::I64 => 8,
        DType::F32 | DType::F16 | DType::BF16 | DType::I32 => 4,
    }
}

/// Bytes of one value of the float compute type of `d` (f64: 8, else f32: 4).
fn real_bytes(d: DType) -> u64 {
    if d == DType::F64 { 8 } else { 4 }
}

/// Scratch offsets are 256-byte aligned.
fn align256(b: u64) -> u64 {
    b.div_ceil(256) * 256
}

/// A scratch range as a launch argument.
fn scratch(offset: u64, bytes: u64) -> PlanArg {
    PlanArg::Scratch {
        offset: offset as usize,
        bytes: bytes as usize,
    }
}

/// One launch of a single-warp entry: one block of 32 threads.
fn one_warp(entry: String, args: Vec<PlanArg>) -> Step {
    Step {
        entry,
        cfg: LaunchConfig {
            grid: Dim3::x(1),
            block: Dim3::x(32),
            shared_bytes: 0,
        },
        args,
    }
}

/// One launch of a warp-per-item entry over `items` (>= 1) rows, lines or chunks.
fn warp_per(entry: String, items: u64, args: Vec<PlanArg>) -> Step {
    let blocks = items.div_ceil(WARPS as u64).min(MAX_GRID_1D as u64) as u32;
    Step {
        entry,
        cfg: LaunchConfig {
            grid: Dim3::x(blocks),
            block: Dim3::x(BLOCK_1D),
            shared_bytes: 0,
        },
        args,
    }
}

/// A plan of one step and no scratch.
fn single(step: Step) -> Plan {
    Plan {
        scratch_bytes: 0,
        steps: vec![step],
    }
}

/// `a * b`, which the kernels index with i64: it must fit (`index` names the argument
/// reported otherwise).
fn product(c: &Call<'_>, a: u64, b: u64, index: usize) -> Result<u64> {
    a.checked_mul(b)
        .filter(|&t| t <= i64::MAX as u64)
        .ok_or_else(|| c.bad(index, "a size whose element count fits in i64"))
}

/// Sum or dot over `n` items: the one-warp main entry for one chunk; for several,
/// `{op}_chunks(part, inputs.., n)` then `sum_partials(out, part, nc)` (`inputs` are
/// the argument indices of the input buffers; `n` is the last argument).
fn long_reduction(c: &Call<'_>, n: u64, inputs: &[usize]) -> Result<Plan> {
    if n <= CHUNK {
        return Ok(single(one_warp(c.entry(), c.all_args())));
    }
    let nc = n.div_ceil(CHUNK);
    let bytes = nc * acc_bytes(c.dtype);
    let part = scratch(0, bytes);
    let mut chunk_args = vec![part];
    for &i in inputs {
        chunk_args.push(c.arg(i)?);
    }
    chunk_args.push(c.arg(inputs.len() + 1)?);
    let nc_arg = PlanArg::Arg(KernelArg::I64(nc as i64));
    Ok(Plan {
        scratch_bytes: bytes as usize,
        steps: vec![
            warp_per(c.aux(&format!("{}_chunks", c.op)), nc, chunk_args),
            one_warp(c.aux("sum_partials"), vec![c.arg(0)?, part, nc_arg]),
        ],
    })
}

/// Row softmax over `rows` rows of `cols > CHUNK` (arguments: out 0, x 1, rows 2,
/// cols 3, as both `softmax` and `softmax_axis` with `inner = 1` have them): chunk
/// maxima, chunk sums, outputs, each a warp per (row, chunk) pair.
fn long_softmax(c: &Call<'_>, rows: u64, cols: u64) -> Result<Plan> {
    let pairs = rows * cols.div_ceil(CHUNK);
    let bytes = pairs * real_bytes(c.dtype);
    let psum_at = align256(bytes);
    let (pmax, psum) = (scratch(0, bytes), scratch(psum_at, bytes));
    let (out, x, r, n) = (c.arg(0)?, c.arg(1)?, c.arg(2)?, c.arg(3)?);
    Ok(Plan {
        scratch_bytes: (psum_at + bytes) as usize,
        steps: vec![
            warp_per(c.aux("softmax_pmax"), pairs, vec![pmax, x, r, n]),
            warp_per(c.aux("softmax_psum"), pairs, vec![psum, pmax, x, r, n]),
            warp_per(
                c.aux("softmax_pwrite"),
                pairs,
                vec![out, pmax, psum, x, r, n],
            ),
        ],
    })
}

/// argmax or reduce_l2 over `rows` rows of `n > CHUNK` (out 0, x 1, rows 2, n 3):
/// `{op}_chunks` (a warp per (row, chunk) pair) then `{op}_finish` (a warp per row).
fn long_rows(c: &Call<'_>, rows: u64, n: u64) -> Result<Plan> {
    let pairs = rows * n.div_ceil(CHUNK);
    let each = if c.op == "argmax" {
        8
    } else {
        real_bytes(c.dtype)
    };
    let part = scratch(0, pairs * each);
    let (out, x, r, len) = (c.arg(0)?, c.arg(1)?, c.arg(2)?, c.arg(3)?);
    let finish_args = if c.op == "argmax" {
        vec![out, part, x, r, len]
    } else {
        vec![out, part, r, len]
    };
    Ok(Plan {
        scratch_bytes: (pairs * each) as usize,
        steps: vec![
            warp_per(
                c.aux(&format!("{}_chunks", c.op)),
                pairs,
                vec![part, x, r, len],
            ),
            warp_per(c.aux(&format!("{}_finish", c.op)), rows, finish_args),
        ],
    })
}

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    match c.op {
        // out, a, n
        "sum" => {
            let n = c.count(2)?;
            product(c, n, 1, 2)?;
            long_reduction(c, n, &[1])
        }
        // out, a, b, n
        "dot" => {
            let n = c.count(3)?;
            product(c, n, 1, 3)?;
            long_reduction(c, n, &[1, 2])
        }
        // out, a, rows, cols
        "softmax" => {
            let (rows, cols) = (c.count(2)?, c.count(3)?);
            if product(c, rows, cols, 3)? == 0 {
                return Ok(Plan::default());
            }
            if cols > CHUNK {
                return long_softmax(c, rows, cols);
            }
            Ok(single(warp_per(c.entry(), rows, c.all_args())))
        }
        // out, x, outer, axis, inner
        "softmax_axis" => {
            let (outer, axis, inner) = (c.count(2)?, c.count(3)?, c.count(4)?);
            let lines = product(c, outer, inner, 4)?;
            if product(c, lines, axis, 4)? == 0 {
                return Ok(Plan::default());
            }
            if inner == 1 && axis > CHUNK {
                return long_softmax(c, outer, axis);
            }
            if inner >= 32 && axis <= CHUNK {
                Ok(grid_stride(c.aux("softmax_cols"), lines, c.all_args()))
            } else {
                Ok(single(warp_per(c.entry(), lines, c.all_args())))
            }
        }
        // out (i64), x, rows, n
        "argmax" => {
            let (rows, n) = (c.count(2)?, c.count(3)?);
            product(c, rows, n, 3)?;
            if rows == 0 {
                return Ok(Plan::default());
            }
            if n == 0 {
                return Err(c.bad(3, "n >= 1 (argmax over an empty axis)"));
            }
            if n > CHUNK {
                return long_rows(c, rows, n);
            }
            Ok(single(warp_per(c.entry(), rows, c.all_args())))
        }
        // out, x, rows, n
        _ => {
            let (rows, n) = (c.count(2)?, c.count(3)?);
            product(c, rows, n, 3)?;
            if rows == 0 {
                return Ok(Plan::default());
            }
            if n > CHUNK {
                return long_rows(c, rows, n);
            }
            Ok(single(warp_per(c.entry(), rows, c.all_args())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{PlanArg, plan};
    use super::*;
    use gpukit_core::Error;

    const OUT: u64 = 1 << 24;
    const A: u64 = 2 << 24;
    const B: u64 = 3 << 24;

    fn buf(p: u64) -> KernelArg {
        crate::plan::testing::buf(p, DType::F32)
    }

    fn arg(a: KernelArg) -> PlanArg {
        PlanArg::Arg(a)
    }

    fn i(v: i64) -> PlanArg {
        PlanArg::Arg(KernelArg::I64(v))
    }

    fn sum_args(n: i64) -> Vec<KernelArg> {
        vec![buf(OUT), buf(A), KernelArg::I64(n)]
    }

    fn dot_args(n: i64) -> Vec<KernelArg> {
        vec![buf(OUT), buf(A), buf(B), KernelArg::I64(n)]
    }

    fn rows_args(rows: i64, n: i64) -> Vec<KernelArg> {
        vec![buf(OUT), buf(A), KernelArg::I64(rows), KernelArg::I64(n)]
    }

    fn axis_args(outer: i64, axis: i64, inner: i64) -> Vec<KernelArg> {
        vec![
            buf(OUT),
            buf(A),
            KernelArg::I64(outer),
            KernelArg::I64(axis),
            KernelArg::I64(inner),
        ]
    }

    fn passed(args: &[KernelArg]) -> Vec<PlanArg> {
        args.iter().map(|a| PlanArg::Arg(*a)).collect()
    }

    fn one_step(p: &Plan) -> &Step {
        assert_eq!(p.scratch_bytes, 0);
        assert_eq!(p.steps.len(), 1, "{p:?}");
        &p.steps[0]
    }

    #[test]
    fn short_sums_and_dots_are_one_warp_of_the_main_entry() {
        // n = 0 still launches: the kernel stores the empty sum (+0.0 / 0).
        for n in [0, 1, 31, 8191, 8192] {
            for d in ["f32", "f64", "f16", "bf16", "i64", "i32"] {
                let name = format!("sum_{d}");
                let p = plan(&name, &sum_args(n)).unwrap();
                let s = one_step(&p);
                assert_eq!(s.entry, name);
                assert_eq!(s.cfg.grid, Dim3::x(1));
                assert_eq!(s.cfg.block, Dim3::x(32));
                assert_eq!(s.cfg.shared_bytes, 0);
                assert_eq!(s.args, passed(&sum_args(n)));
            }
            let p = plan("dot_bf16", &dot_args(n)).unwrap();
            let s = one_step(&p);
            assert_eq!(s.entry, "dot_bf16");
            assert_eq!(s.cfg.block, Dim3::x(32));
            assert_eq!(s.args, passed(&dot_args(n)));
        }
    }

    #[test]
    fn long_sums_write_chunk_partials_then_fold_them() {
        // 8193 items: two chunks, two f32 partials.
        let p = plan("sum_f32", &sum_args(8193)).unwrap();
        let part = PlanArg::Scratch {
            offset: 0,
            bytes: 8,
        };
        assert_eq!(p.scratch_bytes, 8);
        assert_eq!(p.steps.len(), 2);
        assert_eq!(p.steps[0].entry, "sum_chunks_f32");
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(1));
        assert_eq!(p.steps[0].cfg.block, Dim3::x(256));
        assert_eq!(p.steps[0].args, vec![part, arg(buf(A)), i(8193)]);
        assert_eq!(p.steps[1].entry, "sum_partials_f32");
        assert_eq!(p.steps[1].cfg.grid, Dim3::x(1));
        assert_eq!(p.steps[1].cfg.block, Dim3::x(32));
        assert_eq!(p.steps[1].args, vec![arg(buf(OUT)), part, i(2)]);

        // 1000 chunks of f64 / i64 partials (8 bytes), 8 warps per block: 125 blocks.
        for d in ["f64", "i64"] {
            let p = plan(&format!("sum_{d}"), &sum_args(8192 * 1000)).unwrap();
            assert_eq!(p.scratch_bytes, 8000);
            assert_eq!(p.steps[0].entry, format!("sum_chunks_{d}"));
            assert_eq!(p.steps[0].cfg.grid, Dim3::x(125));
            assert_eq!(p.steps[1].entry, format!("sum_partials_{d}"));
            assert_eq!(p.steps[1].args[2], i(1000));
        }
        // f16, bf16 and i32 keep 4-byte partials (f32 for the halves).
        for d in ["f16", "bf16", "i32"] {
            let p = plan(&format!("sum_{d}"), &sum_args(8192 * 3 + 1)).unwrap();
            assert_eq!(p.scratch_bytes, 16, "{d}");
            assert_eq!(p.steps[1].args[2], i(4));
        }
        // A huge input caps the grid; the warps stride over the chunks.
        let p = plan("sum_f32", &sum_args(1 << 40)).unwrap();
        assert_eq!(p.scratch_bytes, (1 << 27) * 4);
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(65_535));
    }

    #[test]
    fn long_dots_use_their_chunks_entry_and_the_sum_partials_fold() {
        let p = plan("dot_f64", &dot_args(8192 * 9)).unwrap();
        let part = PlanArg::Scratch {
            offset: 0,
            bytes: 72,
        };
        assert_eq!(p.scratch_bytes, 72);
        assert_eq!(p.steps.len(), 2);
        assert_eq!(p.steps[0].entry, "dot_chunks_f64");
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(2));
        assert_eq!(p.steps[0].cfg.block, Dim3::x(256));
        assert_eq!(
            p.steps[0].args,
            vec![part, arg(buf(A)), arg(buf(B)), i(8192 * 9)]
        );
        assert_eq!(p.steps[1].entry, "sum_partials_f64");
        assert_eq!(p.steps[1].cfg.block, Dim3::x(32));
        assert_eq!(p.steps[1].args, vec![arg(buf(OUT)), part, i(9)]);
    }

    #[test]
    fn row_kernels_are_one_warp_per_row() {
        for op in ["softmax", "argmax", "reduce_l2"] {
            let name = format!("{op}_f16");
            let args = rows_args(100, 768);
            let p = plan(&name, &args).unwrap();
            let s = one_step(&p);
            assert_eq!(s.entry, name);
            // 8 rows per 256-thread block: 100 rows -> 13 blocks.
            assert_eq!(s.cfg.grid, Dim3::x(13));
            assert_eq!(s.cfg.block, Dim3::x(256));
            assert_eq!(s.args, passed(&args));
            // Rows of exactly one chunk: still one warp each; many rows cap the grid.
            let p = plan(&name, &rows_args(3, 8192)).unwrap();
            assert_eq!(one_step(&p).cfg.grid, Dim3::x(1));
            let p = plan(&name, &rows_args(1 << 30, 2)).unwrap();
            assert_eq!(one_step(&p).cfg.grid, Dim3::x(65_535));
            // No rows: nothing.
            assert_eq!(plan(&name, &rows_args(0, 5)).unwrap(), Plan::default());
        }
        // argmax exists for the integers too.
        assert_eq!(
            one_step(&plan("argmax_i32", &rows_args(9, 3)).unwrap())
                .cfg
                .grid,
            Dim3::x(2)
        );
    }

    #[test]
    fn long_softmax_rows_are_split_into_chunks() {
        // 3 rows of 8192 * 4 + 1 columns: 5 chunks each, 15 (row, chunk) pairs of
        // f32 maxima (60 bytes) and sums (at offset 256).
        let args = rows_args(3, 8192 * 4 + 1);
        let p = plan("softmax_f16", &args).unwrap();
        let (pmax, psum) = (scratch(0, 60), scratch(256, 60));
        assert_eq!(p.scratch_bytes, 316);
        let names: Vec<&str> = p.steps.iter().map(|s| s.entry.as_str()).collect();
        assert_eq!(
            names,
            ["softmax_pmax_f16", "softmax_psum_f16", "softmax_pwrite_f16"]
        );
        for s in &p.steps {
            // 15 warps -> 2 blocks of 8.
            assert_eq!(s.cfg.grid, Dim3::x(2));
            assert_eq!(s.cfg.block, Dim3::x(256));
        }
        let (out, x, r, n) = (arg(args[0]), arg(args[1]), arg(args[2]), arg(args[3]));
        assert_eq!(p.steps[0].args, vec![pmax, x, r, n]);
        assert_eq!(p.steps[1].args, vec![psum, pmax, x, r, n]);
        assert_eq!(p.steps[2].args, vec![out, pmax, psum, x, r, n]);
        // f64: 8-byte values; softmax_axis with inner = 1 takes the same launches.
        let p = plan("softmax_axis_f64", &axis_args(3, 8192 * 4 + 1, 1)).unwrap();
        assert_eq!(p.scratch_bytes, 256 + 120);
        assert_eq!(p.steps[0].entry, "softmax_pmax_f64");
        assert_eq!(p.steps[2].entry, "softmax_pwrite_f64");
        assert_eq!(p.steps[2].args[0], arg(buf(OUT)));
        assert_eq!(p.steps[2].args[3], arg(buf(A)));
        assert_eq!(p.steps[2].args[4], i(3));
        assert_eq!(p.steps[2].args[5], i(8192 * 4 + 1));
    }

    #[test]
    fn long_argmax_and_l2_rows_go_through_chunk_results() {
        // 20 rows of 3 chunks: 60 pairs (8 blocks), then a warp per row (3 blocks).
        let args = rows_args(20, 8192 * 2 + 7);
        let p = plan("argmax_bf16", &args).unwrap();
        let part = scratch(0, 60 * 8);
        assert_eq!(p.scratch_bytes, 480);
        assert_eq!(p.steps.len(), 2);
        assert_eq!(p.steps[0].entry, "argmax_chunks_bf16");
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(8));
        assert_eq!(
            p.steps[0].args,
            vec![part, arg(args[1]), arg(args[2]), arg(args[3])]
        );
        assert_eq!(p.steps[1].entry, "argmax_finish_bf16");
        assert_eq!(p.steps[1].cfg.grid, Dim3::x(3));
        assert_eq!(
            p.steps[1].args,
            vec![arg(args[0]), part, arg(args[1]), arg(args[2]), arg(args[3])]
        );

        let p = plan("reduce_l2_f64", &args).unwrap();
        let part = scratch(0, 60 * 8);
        assert_eq!(p.scratch_bytes, 480);
        assert_eq!(p.steps[0].entry, "reduce_l2_chunks_f64");
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(8));
        assert_eq!(
            p.steps[0].args,
            vec![part, arg(args[1]), arg(args[2]), arg(args[3])]
        );
        assert_eq!(p.steps[1].entry, "reduce_l2_finish_f64");
        assert_eq!(p.steps[1].cfg.grid, Dim3::x(3));
        assert_eq!(
            p.steps[1].args,
            vec![arg(args[0]), part, arg(args[2]), arg(args[3])]
        );
        // f32 chunk sums are 4 bytes.
        assert_eq!(plan("reduce_l2_f32", &args).unwrap().scratch_bytes, 240);
    }

    #[test]
    fn empty_rows_write_nothing_except_the_l2_norm_of_nothing() {
        assert_eq!(
            plan("softmax_f32", &rows_args(4, 0)).unwrap(),
            Plan::default()
        );
        // reduce_l2 over n = 0 stores +0.0 per row.
        let p = plan("reduce_l2_f32", &rows_args(4, 0)).unwrap();
        assert_eq!(one_step(&p).entry, "reduce_l2_f32");
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(1));
        // argmax over an empty axis is an error (the op rejects it first), unless
        // there are no rows at all.
        assert!(matches!(
            plan("argmax_f32", &rows_args(4, 0)),
            Err(Error::Argument { index: 3, .. })
        ));
        assert_eq!(
            plan("argmax_f32", &rows_args(0, 0)).unwrap(),
            Plan::default()
        );
    }

    #[test]
    fn softmax_axis_picks_thread_per_line_for_wide_inner_axes() {
        // inner = 1: rows, a warp per row of the main entry.
        let args = axis_args(100, 10, 1);
        let p = plan("softmax_axis_f32", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "softmax_axis_f32");
        assert_eq!(s.cfg.grid, Dim3::x(13));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.args, passed(&args));
        // inner = 16 < 32: a warp per line, 2 * 16 = 32 lines -> 4 blocks.
        let p = plan("softmax_axis_f64", &axis_args(2, 10, 16)).unwrap();
        assert_eq!(one_step(&p).entry, "softmax_axis_f64");
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(4));
        // inner = 1024: a thread per line, 2 * 1024 lines -> 8 blocks of 256.
        let args = axis_args(2, 10, 1024);
        let p = plan("softmax_axis_bf16", &args).unwrap();
        let s = one_step(&p);
        assert_eq!(s.entry, "softmax_cols_bf16");
        assert_eq!(s.cfg.grid, Dim3::x(8));
        assert_eq!(s.cfg.block, Dim3::x(256));
        assert_eq!(s.args, passed(&args));
        // A line longer than one chunk goes back to a warp per line.
        let p = plan("softmax_axis_f16", &axis_args(1, 8193, 64)).unwrap();
        assert_eq!(one_step(&p).entry, "softmax_axis_f16");
        assert_eq!(one_step(&p).cfg.grid, Dim3::x(8));
        let p = plan("softmax_axis_f16", &axis_args(1, 8192, 64)).unwrap();
        assert_eq!(one_step(&p).entry, "softmax_cols_f16");
        // Any zero size: nothing.
        for (o, a, n) in [(0, 3, 4), (2, 0, 4), (2, 3, 0)] {
            assert_eq!(
                plan("softmax_axis_f32", &axis_args(o, a, n)).unwrap(),
                Plan::default()
            );
        }
    }

    #[test]
    fn bad_sizes_are_argument_errors() {
        assert!(matches!(
            plan("sum_f32", &sum_args(-1)),
            Err(Error::Argument { index: 2, .. })
        ));
        assert!(matches!(
            plan("softmax_f32", &rows_args(1 << 40, 1 << 40)),
            Err(Error::Argument { index: 3, .. })
        ));
        assert!(matches!(
            plan("softmax_axis_f32", &axis_args(1 << 22, 1 << 22, 1 << 22)),
            Err(Error::Argument { index: 4, .. })
        ));
        let mut a = sum_args(3);
        a[2] = KernelArg::F64(3.0);
        assert!(matches!(
            plan("sum_f32", &a),
            Err(Error::Argument { index: 2, .. })
        ));
    }

    /// The committed PTX has every entry these plans launch: the main entries with the
    /// ABI's parameter list (buffers and i64 scalars are 64-bit), the auxiliary ones with
    /// theirs, for every dtype of their op; nothing else.
    #[test]
    fn committed_ptx_entries_match_the_plans() {
        let ptx = crate::ptx::MODULES
            .iter()
            .find(|(f, _)| *f == "reduce")
            .unwrap()
            .1;
        let entries = crate::ptx::entries(ptx);
        let check = |op: &str, name: &str, nparams: usize| {
            let e = entries
                .iter()
                .find(|e| e.name == name)
                .unwrap_or_else(|| panic!("{name} missing from reduce.ptx ({op})"));
            assert_eq!(e.params, vec!["u64"; nparams], "{name}");
        };
        let mut count = 0;
        for op in [
            "sum",
            "dot",
            "softmax",
            "softmax_axis",
            "argmax",
            "reduce_l2",
        ] {
            let sig = gpukit_core::abi::signature(op).unwrap();
            assert!(!sig.args.contains(": f64"));
            for &d in sig.dtypes {
                let n = sig.args.split(',').count();
                check(op, &gpukit_core::abi::kernel_name(op, d), n);
                count += 1;
            }
        }
        for &(aux, op) in AUX {
            let n = match aux {
                "sum_chunks" | "sum_partials" => 3,
                "dot_chunks" | "softmax_pmax" | "argmax_chunks" | "reduce_l2_chunks"
                | "reduce_l2_finish" => 4,
                "softmax_cols" | "softmax_psum" | "argmax_finish" => 5,
                "softmax_pwrite" => 6,
                _ => panic!("{aux}: parameter count unknown to this test"),
            };
            for &d in gpukit_core::abi::signature(op).unwrap().dtypes {
                check(op, &gpukit_core::abi::kernel_name(aux, d), n);
                count += 1;
            }
        }
        assert_eq!(entries.len(), count);
    }
}

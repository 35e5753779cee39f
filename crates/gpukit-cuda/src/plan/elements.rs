//! Plans for `kernels-cuda/elements.cu`: element-wise gather and scatter.
//!
//! * `gather_elements`: one grid-stride launch over the `outer * nidx * inner` outputs.
//! * `pad`: one grid-stride launch over the `n_out` outputs.
//! * `scatter_elements`: one grid-stride launch over the `outer * inner` columns; each
//!   thread applies its column's updates in ascending `g` (the defined order, no
//!   atomics).
//!
//! * `cumsum`: one grid-stride launch over the `outer * inner` lines; each thread runs
//!   its line's chain in order (the contract's order: no parallel scan). Contiguous
//!   lines (`inner = 1`) go to `cumsum_rows`: a warp per 32 lines, the same chains,
//!   loads and stores coalesced through shared-memory tiles.
//! * `topk`: one grid-stride launch over the `outer * len * inner` inputs; each thread
//!   counts its element's rank in its line and writes it when the rank is below `k`.
//!
//! Nothing to move (an empty output or no updates) is no launch.

use super::{Call, Plan, grid_stride};
use gpukit_core::Result;

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[("cumsum_rows", "cumsum")];

/// The product of the count arguments `idx`, which must fit in an i64.
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

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    if c.op == "pad" {
        // out, x, value, layout, ndim, mode, n_out: one thread per output element.
        c.count(4)?;
        c.count(5)?;
        return Ok(grid_stride(c.entry(), c.count(6)?, c.all_args()));
    }
    if c.op == "cumsum" {
        // y, x, outer, len, inner, exclusive, reverse.
        c.count(5)?;
        c.count(6)?;
        if product(c, &[2, 3, 4])? == 0 {
            return Ok(Plan::default());
        }
        if c.count(4)? == 1 {
            // Contiguous lines: a warp per 32 lines through shared-memory tiles
            // (y, x, lines, len, exclusive, reverse); one thread per line.
            let args = [0, 1, 2, 3, 5, 6]
                .iter()
                .map(|&i| c.arg(i))
                .collect::<Result<Vec<_>>>()?;
            return Ok(grid_stride(c.aux("cumsum_rows"), c.count(2)?, args));
        }
        return Ok(grid_stride(c.entry(), product(c, &[2, 4])?, c.all_args()));
    }
    if c.op == "topk" {
        // values, indices, x, outer, len, inner, k, largest.
        c.count(7)?;
        let inputs = product(c, &[3, 4, 5])?;
        if product(c, &[3, 6, 5])? == 0 {
            return Ok(Plan::default());
        }
        return Ok(grid_stride(c.entry(), inputs, c.all_args()));
    }
    // Both: [y|out], [idx|data], .., outer, axis_len, inner, nidx (, reduction).
    product(c, &[3, 4, 5])?;
    let n = product(c, &[3, 6, 5])?;
    if n == 0 {
        return Ok(Plan::default());
    }
    let items = if c.op == "gather_elements" {
        n
    } else {
        c.count(7)?;
        product(c, &[3, 5])?
    };
    Ok(grid_stride(c.entry(), items, c.all_args()))
}

#[cfg(test)]
mod tests {
    use super::super::plan;
    use gpukit_core::{DType, Dim3, Error, KernelArg};

    fn args(op: &str, d: DType, outer: i64, axis: i64, inner: i64, nidx: i64) -> Vec<KernelArg> {
        let b = |p: u64, t: DType| crate::plan::testing::buf(p << 24, t);
        let mut a = if op == "gather_elements" {
            vec![b(1, d), b(2, d), b(3, DType::I64)]
        } else {
            vec![b(1, d), b(3, DType::I64), b(2, d)]
        };
        a.extend([outer, axis, inner, nidx].map(KernelArg::I64));
        if op == "scatter_elements" {
            a.push(KernelArg::I64(1));
        }
        a
    }

    #[test]
    fn cumsum_is_one_thread_per_line_and_nothing_when_empty() {
        let b = |p: u64, t: DType| crate::plan::testing::buf(p << 24, t);
        let a = |outer: i64, len: i64, inner: i64| {
            let mut v = vec![b(1, DType::F32), b(2, DType::F32)];
            v.extend([outer, len, inner, 0, 1].map(KernelArg::I64));
            v
        };
        let p = plan("cumsum_f32", &a(3, 7, 5)).unwrap();
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.steps[0].entry, "cumsum_f32");
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(1));
        assert!(plan("cumsum_f32", &a(3, 0, 5)).unwrap().steps.is_empty());
        assert!(plan("cumsum_f32", &a(-1, 7, 5)).is_err());
        // Contiguous rows: cumsum_rows, a warp per 32 rows (y, x, lines, len,
        // exclusive, reverse), threads for the rows.
        let p = plan("cumsum_f64", &a(600, 7, 1)).unwrap();
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.steps[0].entry, "cumsum_rows_f64");
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(3));
        assert_eq!(p.steps[0].args.len(), 6);
        assert!(plan("cumsum_f64", &a(600, 0, 1)).unwrap().steps.is_empty());
    }

    #[test]
    fn topk_is_one_thread_per_input_and_nothing_when_k_is_0() {
        let b = |p: u64, t: DType| crate::plan::testing::buf(p << 24, t);
        let a = |outer: i64, len: i64, inner: i64, k: i64| {
            let mut v = vec![b(1, DType::F32), b(2, DType::I64), b(3, DType::F32)];
            v.extend([outer, len, inner, k, 1].map(KernelArg::I64));
            v
        };
        let p = plan("topk_f32", &a(3, 700, 5, 4)).unwrap();
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.steps[0].entry, "topk_f32");
        assert!(plan("topk_f32", &a(3, 7, 5, 0)).unwrap().steps.is_empty());
        assert!(plan("topk_f32", &a(3, 7, -5, 2)).is_err());
    }

    #[test]
    fn one_grid_stride_launch_or_none() {
        let p = plan(
            "gather_elements_f16",
            &args("gather_elements", DType::F16, 3, 10, 7, 5),
        )
        .unwrap();
        assert_eq!(p.steps.len(), 1);
        assert_eq!(p.steps[0].entry, "gather_elements_f16");
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(1));
        // 2 * 300 = 600 columns: 3 blocks of 256.
        let p = plan(
            "scatter_elements_i32",
            &args("scatter_elements", DType::I32, 2, 4, 300, 9),
        )
        .unwrap();
        assert_eq!(p.steps[0].cfg.grid, Dim3::x(3));
        assert_eq!(p.steps[0].args.len(), 8);
        for op in ["gather_elements", "scatter_elements"] {
            let name = format!("{op}_f32");
            for (o, a, i, g) in [(0, 4, 5, 6), (2, 4, 0, 6), (2, 4, 5, 0)] {
                let p = plan(&name, &args(op, DType::F32, o, a, i, g)).unwrap();
                assert!(p.steps.is_empty(), "{name}");
            }
        }
        let r = plan(
            "gather_elements_f32",
            &args("gather_elements", DType::F32, -1, 4, 5, 6),
        );
        assert!(matches!(r, Err(Error::Argument { index: 3, .. })), "{r:?}");
    }

    #[test]
    fn every_entry_of_the_module_is_planned() {
        let ptx = crate::ptx::MODULES
            .iter()
            .find(|(f, _)| *f == "elements")
            .unwrap()
            .1;
        let entries = crate::ptx::entries(ptx);
        let mut seen = std::collections::BTreeSet::new();
        for d in DType::ALL {
            let b = |p: u64, t: DType| crate::plan::testing::buf(p << 24, t);
            let pad_args = vec![
                b(1, d),
                b(2, d),
                b(3, d),
                b(4, DType::I64),
                KernelArg::I64(2),
                KernelArg::I64(1),
                KernelArg::I64(600),
            ];
            let mut cumsum_args = vec![b(1, d), b(2, d)];
            cumsum_args.extend([2, 3, 4, 1, 0].map(KernelArg::I64));
            let mut topk_args = vec![b(1, d), b(2, DType::I64), b(3, d)];
            topk_args.extend([2, 3, 4, 2, 1].map(KernelArg::I64));
            for op in [
                "gather_elements",
                "scatter_elements",
                "pad",
                "cumsum",
                "topk",
            ] {
                let name = format!("{op}_{}", d.name());
                let a = match op {
                    "pad" => pad_args.clone(),
                    "cumsum" => cumsum_args.clone(),
                    "topk" => topk_args.clone(),
                    _ => args(op, d, 2, 3, 4, 5),
                };
                let mut calls = vec![a.clone()];
                if op == "cumsum" {
                    // inner = 1: the contiguous-rows entry.
                    let mut rows = a;
                    rows[4] = KernelArg::I64(1);
                    calls.push(rows);
                }
                for a in calls {
                    for s in plan(&name, &a).unwrap().steps {
                        let e = entries.iter().find(|e| e.name == s.entry).unwrap();
                        assert_eq!(e.params, vec!["u64"; s.args.len()], "{}", s.entry);
                        seen.insert(s.entry);
                    }
                }
            }
        }
        assert_eq!(seen.len(), entries.len());
    }
}

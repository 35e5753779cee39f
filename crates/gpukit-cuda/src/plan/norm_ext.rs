//! Plans for `kernels-cuda/norm_ext.cu`: `layer_norm_ex`, `group_norm`, `rms_norm`, each
//! one warp per row, [`WARPS`] warps per block, grid-stride over rows (the warp runs the
//! reduction shape over its row, then writes it). The ABI arguments pass through
//! unchanged; no scratch, no auxiliary entries.

use super::{BLOCK_1D, Call, MAX_GRID_1D, Plan, Step};
use gpukit_core::{Dim3, LaunchConfig, Result};

/// Auxiliary entries of this family: none.
pub(super) const AUX: &[(&str, &str)] = &[];

/// Warps (rows in flight) per block: the kernels' `NE_BLOCK / 32`.
const WARPS: u32 = BLOCK_1D / 32;

/// One launch of `rows` warps (none for no rows).
fn rows_plan(c: &Call<'_>, rows: u64) -> Plan {
    if rows == 0 {
        return Plan::default();
    }
    let blocks = rows.div_ceil(WARPS as u64).min(MAX_GRID_1D as u64) as u32;
    Plan {
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
    }
}

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    match c.op {
        // out, x, scale, bias, mean, inv_std, rows, n, has_bias, has_stats, eps
        "layer_norm_ex" => {
            let (rows, n, stats) = (c.count(6)?, c.count(7)?, c.count(9)?);
            // n = 0 writes no element; it writes NaN statistics when asked.
            Ok(rows_plan(c, if n == 0 && stats == 0 { 0 } else { rows }))
        }
        // out, x, scale, bias, batch, c, s, groups, eps
        "group_norm" => {
            let (batch, ch, s, groups) = (c.count(4)?, c.count(5)?, c.count(6)?, c.count(7)?);
            if batch == 0 || ch == 0 || s == 0 {
                return Ok(Plan::default());
            }
            let rows = batch
                .checked_mul(groups)
                .filter(|&r| r <= i64::MAX as u64)
                .ok_or_else(|| c.bad(7, "batch * groups within i64"))?;
            Ok(rows_plan(c, rows))
        }
        // out, x, scale, rows, n, eps
        _ => {
            let (rows, n) = (c.count(3)?, c.count(4)?);
            Ok(rows_plan(c, if n == 0 { 0 } else { rows }))
        }
    }
}

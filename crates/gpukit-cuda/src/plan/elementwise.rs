//! Plans for `kernels-cuda/elementwise.cu`: one grid-stride launch over the outputs.

use super::{Call, Plan, grid_stride};
use gpukit_core::Result;

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[];

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    let items = match c.op {
        // out, a, b, n
        "add" | "sub" | "mul" | "div" => c.count(3)?,
        // out, a, b, dims, astr, bstr, ndim, n_out
        "add_bc" | "sub_bc" | "mul_bc" | "div_bc" => c.count(7)?,
        // out, a, n
        _ => c.count(2)?,
    };
    Ok(grid_stride(c.entry(), items, c.all_args()))
}

//! Plans for `kernels-cuda/linalg.cu`.

use super::{Call, Plan};
use gpukit_core::{Error, Result};

/// Auxiliary entries of this family: `(aux name, ABI op)`.
pub(super) const AUX: &[(&str, &str)] = &[];

pub(super) fn plan(c: &Call<'_>) -> Result<Plan> {
    Err(Error::KernelNotFound {
        name: c.entry(),
        backend: "cuda".into(),
        reason: "kernels-cuda/linalg.cu is being written".into(),
    })
}

//! CPU kernels of the neural-network family, one module per group of
//! [`gpukit_core::abi`].

use crate::args::BuiltinFn;

mod attention;
mod conv;
mod movement;
mod norm;
mod norm_ext;
mod reduce_axes;
mod resize;

/// `(name, entry point)` for every neural-network kernel.
pub(crate) fn entries() -> Vec<(String, BuiltinFn)> {
    let mut v = conv::entries();
    v.extend(norm::entries());
    v.extend(norm_ext::entries());
    v.extend(attention::entries());
    v.extend(movement::entries());
    v.extend(reduce_axes::entries());
    v.extend(resize::entries());
    v
}
